package cache

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// ListPageCache caches the first pages every visitor asks for: the global list and each tag's
// list, with the default page size. An entry holds the page's summaries and the list's
// articlesCount; authors, counters and the viewer's flags are composed per request, as for any
// list. Every committed write that can change a page (publish, withdraw, delete, an edit of a
// published article) drops the global page and the pages of the article's tags before and after
// it; the drop reaches the other instances' in-process copies through the invalidation channel,
// and its tombstone keeps a fill that read the page before the write from storing it.
//
// A reader's first feed page is cached too, under a key holding the feed's stamp (see Feed and
// FeedStamps).
type ListPageCache struct {
	rt     *ReadThrough[cachedListPage]
	feeds  *ReadThrough[cachedListPage]
	stamps *FeedStamps
	ks     Keyspace
}

// NewListPageCache returns the first-page cache.
func NewListPageCache(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *ListPageCache {
	feedPolicy := policy
	feedPolicy.TTL, feedPolicy.Jitter = FeedPageTTL, FeedPageTTL/5
	return &ListPageCache{
		rt:     NewReadThrough[cachedListPage](rdb, "listpage", policy, log),
		feeds:  NewReadThrough[cachedListPage](rdb, "feedpage", feedPolicy, log),
		stamps: NewFeedStamps(rdb, ks, policy, log),
		ks:     ks,
	}
}

type cachedListPage struct {
	Articles []cachedArticle `json:"articles"`
	Total    int64           `json:"total"`
	More     *bool           `json:"more,omitempty"` // nil in entries of versions that did not store it
}

// ListPage is one cached first page; More says whether a second page exists.
type ListPage struct {
	Articles []domain.Article
	Total    int64
	More     bool
}

// Global returns the global first page, calling load on a miss.
func (c *ListPageCache) Global(ctx context.Context, load func(context.Context) (ListPage, error)) (ListPage, error) {
	return c.get(ctx, c.globalKey(), load)
}

// Tag returns tag's first page, calling load on a miss.
func (c *ListPageCache) Tag(ctx context.Context, tag string, load func(context.Context) (ListPage, error)) (ListPage, error) {
	return c.get(ctx, c.tagKey(tag), load)
}

// FeedPageTTL bounds a cached feed page: its key holds the stamp of the state it shows, so a
// change makes readers look for another key and the old one only waits for its expiry.
const FeedPageTTL = time.Minute

// Feed returns readerID's first feed page, calling followees for the authors they follow when
// their cached list misses, and load for the page when the page misses. No write invalidates a
// page: a change of what the feed shows changes its stamp (FeedStamps), and so its key. ok false
// means Redis could not make the stamp: the caller serves the feed from PostgreSQL.
func (c *ListPageCache) Feed(ctx context.Context, readerID int64, followees func(context.Context) ([]int64, error), load func(context.Context) (ListPage, error)) (page ListPage, ok bool, err error) {
	stamp, followed, err := c.stamps.Stamp(ctx, readerID, followees)
	if err != nil {
		if ctx.Err() == nil {
			c.stamps.log.WarnContext(ctx, "feed stamp failed, serving the feed from the database", "err", err)
		}
		return ListPage{}, false, nil
	}
	if followed == 0 {
		return ListPage{Articles: []domain.Article{}}, true, nil
	}
	page, err = c.getFrom(ctx, c.feeds, c.ks.Key("listpage", "feed", strconv.FormatInt(readerID, 10), strconv.FormatInt(stamp, 16)), load)
	return page, true, err
}

// AuthorChanged changes the stamp of every feed holding authorID; call it after a committed write
// of one of the author's articles.
func (c *ListPageCache) AuthorChanged(ctx context.Context, authorID int64) error {
	return c.stamps.AuthorChanged(ctx, authorID)
}

// FollowsChanged drops readerID's cached follow list; call it after their follow or unfollow.
func (c *ListPageCache) FollowsChanged(ctx context.Context, readerID int64) error {
	return c.stamps.FollowsChanged(ctx, readerID)
}

// Invalidate drops the global first page and the first pages of tags.
func (c *ListPageCache) Invalidate(ctx context.Context, tags ...string) error {
	keys := make([]string, 0, len(tags)+1)
	keys = append(keys, c.globalKey())
	for _, t := range tags {
		keys = append(keys, c.tagKey(t))
	}
	return c.rt.Delete(ctx, keys...)
}

// InvalidateEverywhere is Invalidate that returns once every instance has dropped its in-process
// copies.
func (c *ListPageCache) InvalidateEverywhere(ctx context.Context, tags ...string) error {
	keys := make([]string, 0, len(tags)+1)
	keys = append(keys, c.globalKey())
	for _, t := range tags {
		keys = append(keys, c.tagKey(t))
	}
	return c.rt.DeleteAcked(ctx, keys...)
}

func (c *ListPageCache) get(ctx context.Context, key string, load func(context.Context) (ListPage, error)) (ListPage, error) {
	return c.getFrom(ctx, c.rt, key, load)
}

func (c *ListPageCache) getFrom(ctx context.Context, rt *ReadThrough[cachedListPage], key string, load func(context.Context) (ListPage, error)) (ListPage, error) {
	cp, err := rt.Get(ctx, key, func(ctx context.Context) (cachedListPage, error) {
		p, err := load(ctx)
		if err != nil {
			return cachedListPage{}, err
		}
		out := cachedListPage{Articles: make([]cachedArticle, len(p.Articles)), Total: p.Total, More: &p.More}
		for i, a := range p.Articles {
			out.Articles[i] = toCachedArticle(a)
		}
		return out, nil
	})
	if err != nil {
		return ListPage{}, err
	}
	p := ListPage{Articles: make([]domain.Article, len(cp.Articles)), Total: cp.Total, More: moreOf(cp.More, len(cp.Articles))}
	for i, a := range cp.Articles {
		p.Articles[i] = a.domain()
	}
	return p, nil
}

func (c *ListPageCache) globalKey() string { return listGlobalKey(c.ks) }

// listGlobalKey is the global first page's key (the tag cloud follows its changes).
func listGlobalKey(ks Keyspace) string { return ks.Key("listpage", "global") }

func (c *ListPageCache) tagKey(tag string) string { return c.ks.Key("listpage", "tag", tag) }

// moreOf is a cached first page's More. An entry written by a version that did not store it (a
// rolling upgrade, until it expires) is read by that version's rule: a full page may have more.
func moreOf(stored *bool, n int) bool {
	if stored == nil {
		return n >= domain.DefaultPageLimit
	}
	return *stored
}
