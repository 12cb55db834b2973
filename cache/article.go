package cache

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// ArticleCache caches full articles by slug (the detail page). Counters and per-viewer flags are
// not part of the entry: they change far more often and live in their own caches.
//
// An entry holds the body rendered as HTML beside its Markdown: every entry is built by
// entry, whichever path fills it (a read, a list, a refresh after a write, a preload),
// so the HTML is rendered once per version of the article and a write's invalidation drops both.
type ArticleCache struct {
	rt     *ReadThrough[cachedArticle]
	ks     Keyspace
	render BodyRenderer
}

// BodyRenderer renders an article's Markdown body as sanitized HTML (render.Renderer).
type BodyRenderer interface {
	Render(markdown string) string
}

// NewArticleCache returns the article cache; render may be nil (entries then hold no HTML).
func NewArticleCache(rdb redis.UniversalClient, ks Keyspace, policy Policy, render BodyRenderer, log *slog.Logger) *ArticleCache {
	return &ArticleCache{rt: NewReadThrough[cachedArticle](rdb, "article", policy, log), ks: ks, render: render}
}

type cachedArticle struct {
	ID          int64                `json:"id"`
	Slug        string               `json:"slug"`
	AuthorID    int64                `json:"authorId"`
	Title       string               `json:"title"`
	Description string               `json:"description"`
	Body        string               `json:"body"`
	BodyHTML    string               `json:"bodyHtml,omitempty"`
	Tags        []string             `json:"tags"`
	Status      domain.ArticleStatus `json:"status"`
	Version     int32                `json:"version"`
	CreatedAt   time.Time            `json:"createdAt"`
	UpdatedAt   time.Time            `json:"updatedAt"`
	PublishedAt *time.Time           `json:"publishedAt,omitempty"`
	PublishAt   *time.Time           `json:"publishAt,omitempty"` // a scheduled article's time (#32)
	// A hidden article is stored with status "hidden", as PostgreSQL holds it, and its author's
	// status beside it: an instance of a version before moderation reads the entry as an
	// article that is not published, never as a published one.
	HiddenStatus domain.ArticleStatus `json:"hiddenStatus,omitempty"`
	HiddenReason string               `json:"hiddenReason,omitempty"`
	CoverImage   string               `json:"coverImage,omitempty"`
}

// entry builds the detail entry of a: the article with its body rendered.
func (c *ArticleCache) entry(a domain.Article) cachedArticle {
	e := toCachedArticle(a)
	e.BodyHTML = c.renderBody(a.Body)
	return e
}

// toCachedArticle is a as the lists' entries hold it (no HTML: lists never show it).
func toCachedArticle(a domain.Article) cachedArticle {
	e := cachedArticle{ID: a.ID, Slug: a.Slug, AuthorID: a.AuthorID, Title: a.Title, Description: a.Description,
		Body: a.Body, Tags: a.Tags, Status: a.Status, Version: a.Version, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		PublishedAt: a.PublishedAt, PublishAt: a.PublishAt, CoverImage: a.CoverImage}
	if a.Moderation.Hidden {
		e.Status, e.HiddenStatus, e.HiddenReason = domain.StatusHidden, a.Status, a.Moderation.Reason
	}
	return e
}

func (c *ArticleCache) renderBody(markdown string) string {
	if c.render == nil {
		return ""
	}
	return c.render.Render(markdown)
}

// article returns the entry as a domain.Article. An entry an instance of the previous release
// stored has no HTML: it is rendered here until a write or the entry's lifetime replaces it.
func (c *ArticleCache) article(e cachedArticle) domain.Article {
	a := e.domain()
	if a.BodyHTML == "" && a.Body != "" {
		a.BodyHTML = c.renderBody(a.Body)
	}
	return a
}

func (c cachedArticle) domain() domain.Article {
	tags := c.Tags
	if tags == nil {
		tags = []string{}
	}
	a := domain.Article{ID: c.ID, Slug: c.Slug, AuthorID: c.AuthorID, Title: c.Title, Description: c.Description,
		Body: c.Body, BodyHTML: c.BodyHTML, Tags: tags, Status: c.Status, Version: c.Version, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		PublishedAt: c.PublishedAt, PublishAt: c.PublishAt, CoverImage: c.CoverImage}
	if c.Status == domain.StatusHidden {
		a.Status, a.Moderation = c.HiddenStatus, domain.ContentModeration{Hidden: true, Reason: c.HiddenReason}
	}
	return a
}

// BySlug returns the article with slug, calling load on a miss.
func (c *ArticleCache) BySlug(ctx context.Context, slug string, load func(context.Context) (domain.Article, error)) (domain.Article, error) {
	ca, err := c.rt.Get(ctx, c.key(slug), func(ctx context.Context) (cachedArticle, error) {
		a, err := load(ctx)
		return c.entry(a), err
	})
	if err != nil {
		return domain.Article{}, err
	}
	return c.article(ca), nil
}

// BySlugs returns the articles among slugs that exist, by slug, loading the misses with one call
// of load.
func (c *ArticleCache) BySlugs(ctx context.Context, slugs []string, load func(context.Context, []string) (map[string]domain.Article, error)) (map[string]domain.Article, error) {
	keys := make([]string, len(slugs))
	slugOf := make(map[string]string, len(slugs))
	for i, s := range slugs {
		keys[i] = c.key(s)
		slugOf[keys[i]] = s
	}
	got, err := c.rt.GetMany(ctx, keys, func(ctx context.Context, missing []string) (map[string]cachedArticle, error) {
		want := make([]string, len(missing))
		for i, k := range missing {
			want[i] = slugOf[k]
		}
		arts, err := load(ctx, want)
		if err != nil {
			return nil, err
		}
		out := make(map[string]cachedArticle, len(arts))
		for s, a := range arts {
			out[c.key(s)] = c.entry(a)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]domain.Article, len(got))
	for k, ca := range got {
		out[slugOf[k]] = c.article(ca)
	}
	return out, nil
}

// Refresh invalidates slug's entry and loads it again with load (after publishing: the first
// readers hit a warm cache). The load runs after the invalidation, so what it stores is never
// older than the write that asked for it (see ReadThrough.Refresh).
func (c *ArticleCache) Refresh(ctx context.Context, slug string, load func(context.Context) (domain.Article, error)) error {
	return c.rt.Refresh(ctx, c.key(slug), func(ctx context.Context) (cachedArticle, error) {
		a, err := load(ctx)
		return c.entry(a), err
	})
}

// Preload loads slug's article with load and caches it for a short ttl, unless an entry (or null
// marker) exists: a guess that it will be read soon, which never replaces fresher data.
func (c *ArticleCache) Preload(ctx context.Context, slug string, ttl time.Duration, load func(context.Context) (domain.Article, error)) error {
	return c.rt.Preload(ctx, c.key(slug), ttl, func(ctx context.Context) (cachedArticle, error) {
		a, err := load(ctx)
		return c.entry(a), err
	})
}

// Invalidate drops the entry of slug.
func (c *ArticleCache) Invalidate(ctx context.Context, slug string) error {
	return c.rt.Delete(ctx, c.key(slug))
}

// InvalidateEverywhere drops the entries of several articles at once (one pipeline, one
// broadcast) and returns once every instance has dropped its in-process copies.
func (c *ArticleCache) InvalidateEverywhere(ctx context.Context, slugs ...string) error {
	keys := make([]string, len(slugs))
	for i, s := range slugs {
		keys[i] = c.key(s)
	}
	return c.rt.DeleteAcked(ctx, keys...)
}

// Stats exposes the cache's counters.
func (c *ArticleCache) Stats() *Stats { return &c.rt.Stats }

// Key is the Redis key of slug's entry (tests inspect it).
func (c *ArticleCache) Key(slug string) string { return c.key(slug) }

func (c *ArticleCache) key(slug string) string { return c.ks.Key("article", "slug", slug) }
