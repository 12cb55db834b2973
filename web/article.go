package web

import (
	"context"
	"log/slog"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=article.go -destination=mocks/article_mock.go -package=mocks

// ArticleService is what the article handlers need.
type ArticleService interface {
	Create(ctx context.Context, viewerID int64, in service.CreateArticleInput) (domain.ArticleView, error)
	CreateIdempotent(ctx context.Context, viewerID int64, in service.CreateArticleInput, idem service.Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error)
	Get(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Update(ctx context.Context, viewerID int64, slug string, in service.UpdateArticleInput) (domain.ArticleView, error)
	Publish(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Withdraw(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Delete(ctx context.Context, viewerID int64, slug string) error
	Favorite(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Unfavorite(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	List(ctx context.Context, viewerID int64, in service.ListInput) (service.ArticleList, error)
	Feed(ctx context.Context, viewerID int64, p domain.Page) (service.ArticleList, error)
	Mine(ctx context.Context, viewerID int64, status domain.ArticleStatus, p domain.Page) (service.ArticleList, error)
	Tags(ctx context.Context) ([]string, error)
	Counters(ctx context.Context, ids []int64) (map[int64]domain.Counters, error)
	RecordRead(viewerID, articleID int64)
	FlagsOf(ctx context.Context, viewerID, articleID, authorID int64) (service.ViewerFlags, error)
}

// ArticleHandler serves articles, the feed, favorites and tags.
type ArticleHandler struct {
	articles ArticleService
	log      *slog.Logger
	docs     *articleDocs
	kept     *keptAnswers
}

// NewArticleHandler returns the handler; with changes nil, no answer is kept (keptAnswers).
func NewArticleHandler(articles ArticleService, changes ContentChanges, log *slog.Logger) *ArticleHandler {
	return &ArticleHandler{articles: articles, log: log, docs: newArticleDocs(articleDocsBytes), kept: newKeptAnswers(changes)}
}

type articleJSON struct {
	Slug        string  `json:"slug"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Body        *string `json:"body,omitempty"`
	// BodyHTML is the body rendered and sanitized (EXT), beside body in the single-article view.
	BodyHTML       *string     `json:"bodyHtml,omitempty"`
	TagList        []string    `json:"tagList"`
	CreatedAt      timestamp   `json:"createdAt"`
	UpdatedAt      timestamp   `json:"updatedAt"`
	Favorited      bool        `json:"favorited"`
	FavoritesCount int64       `json:"favoritesCount"`
	Author         profileJSON `json:"author"`
	Status         string      `json:"status"`
	Version        int32       `json:"version"`
	ReadsCount     int64       `json:"readsCount"`
	Collected      bool        `json:"collected"`
	CollectsCount  int64       `json:"collectsCount"`
	// Moderation is present only on an article a moderator hid, which only its author reads.
	Moderation *moderationJSON `json:"moderation,omitempty"`
	CoverImage string          `json:"coverImage,omitempty"` // EXT: left out when none
	// PublishAt is when a scheduled article publishes itself (EXT, #32): only on scheduled ones.
	PublishAt *timestamp `json:"publishAt,omitempty"`
}

func articleOf(v domain.ArticleView, withBody bool) articleJSON {
	out := articleJSON{
		Slug: v.Slug, Title: v.Title, Description: v.Description, TagList: sortedTags(v.Tags),
		CreatedAt: timestamp(v.CreatedAt), UpdatedAt: timestamp(v.UpdatedAt),
		Favorited: v.Favorited, FavoritesCount: v.Counters.Likes, Moderation: moderationOf(v.Moderation), CoverImage: v.CoverImage,
		Author: profileResponse(v.Author).Profile,
		Status: string(v.Status), Version: v.Version,
		ReadsCount: v.Counters.Reads, Collected: v.Collected, CollectsCount: v.Counters.Collects,
	}
	if v.PublishAt != nil {
		at := timestamp(*v.PublishAt)
		out.PublishAt = &at
	}
	if withBody {
		body, bodyHTML := v.Body, v.BodyHTML
		out.Body, out.BodyHTML = &body, &bodyHTML
	}
	return out
}

// sortedTags is an article's tagList as every answer shows it: in alphabetical (byte) order, as
// RealWorld clients expect, and never null. Writes already store tags sorted
// (domain.NormalizeTags); this covers what was stored before, in PostgreSQL and in cached
// entries alike, which is why it sits here, where every article answer (single, lists, feed, hot
// list, collections, history) is rendered, rather than in one of the ways articles are loaded.
// tags is never sorted in place: an in-process cache may share it with other requests.
func sortedTags(tags []string) []string {
	switch {
	case tags == nil:
		return []string{}
	case slices.IsSorted(tags):
		return tags
	}
	out := slices.Clone(tags)
	slices.Sort(out)
	return out
}

type articleEnvelope struct {
	Article articleJSON `json:"article"`
}

type articlesEnvelope struct {
	Articles      []articleJSON `json:"articles"`
	ArticlesCount int64         `json:"articlesCount"`
	NextCursor    string        `json:"nextCursor,omitempty"`
}

// listResponse renders a list of summaries: the RealWorld spec dropped body from the
// multiple-article answers (lists, feed), and so do every other list here.
func listResponse(l service.ArticleList) articlesEnvelope {
	out := articlesEnvelope{Articles: make([]articleJSON, len(l.Articles)), ArticlesCount: l.Total, NextCursor: encodeCursor(l.NextCursor)}
	for i, a := range l.Articles {
		out.Articles[i] = articleOf(a, false)
	}
	return out
}

type createArticleRequest struct {
	Article struct {
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Body        string   `json:"body"`
		TagList     []string `json:"tagList"`
		Draft       bool     `json:"draft"`
		CoverImage  string   `json:"coverImage"` // EXT
	} `json:"article"`
}

// Create handles POST /api/articles.
func (h *ArticleHandler) Create(c *gin.Context) {
	var req createArticleRequest
	if !bindJSON(c, &req) {
		return
	}
	a := req.Article
	in := service.CreateArticleInput{Title: a.Title, Description: a.Description, Body: a.Body, Tags: a.TagList, Draft: a.Draft, CoverImage: a.CoverImage}
	respond := func(v domain.ArticleView, err error) { h.respondOne(c, http.StatusCreated, v, err) }
	if key, ok := idempotencyKeyOf(c); ok {
		res, replayed, err := h.articles.CreateIdempotent(c.Request.Context(), viewerID(c), in, idempotent(c, key, respond))
		writeStored(c, h.log, res, replayed, err)
		return
	}
	respond(h.articles.Create(c.Request.Context(), viewerID(c), in))
}

// Get handles GET /api/articles/:slug.
func (h *ArticleHandler) Get(c *gin.Context) {
	if h.serveKeptArticle(c, viewerID(c), c.Param("slug")) {
		return
	}
	v, err := h.articles.Get(c.Request.Context(), viewerID(c), c.Param("slug"))
	h.respondOne(c, http.StatusOK, v, err)
}

type updateArticleRequest struct {
	Article struct {
		Title       *string   `json:"title"`
		Description *string   `json:"description"`
		Body        *string   `json:"body"`
		TagList     *[]string `json:"tagList"`
		Version     *int32    `json:"version"`
		CoverImage  *string   `json:"coverImage"` // EXT
	} `json:"article"`
}

// Update handles PUT /api/articles/:slug.
func (h *ArticleHandler) Update(c *gin.Context) {
	var req updateArticleRequest
	if !bindJSON(c, &req) {
		return
	}
	a := req.Article
	v, err := h.articles.Update(c.Request.Context(), viewerID(c), c.Param("slug"), service.UpdateArticleInput{
		Title: a.Title, Description: a.Description, Body: a.Body, Tags: a.TagList, Version: a.Version, CoverImage: a.CoverImage,
	})
	h.respondOne(c, http.StatusOK, v, err)
}

// Delete handles DELETE /api/articles/:slug.
func (h *ArticleHandler) Delete(c *gin.Context) {
	if err := h.articles.Delete(c.Request.Context(), viewerID(c), c.Param("slug")); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// Publish handles POST /api/articles/:slug/publish.
func (h *ArticleHandler) Publish(c *gin.Context) {
	v, err := h.articles.Publish(c.Request.Context(), viewerID(c), c.Param("slug"))
	h.respondOne(c, http.StatusOK, v, err)
}

// Withdraw handles POST /api/articles/:slug/withdraw.
func (h *ArticleHandler) Withdraw(c *gin.Context) {
	v, err := h.articles.Withdraw(c.Request.Context(), viewerID(c), c.Param("slug"))
	h.respondOne(c, http.StatusOK, v, err)
}

// Favorite handles POST /api/articles/:slug/favorite.
func (h *ArticleHandler) Favorite(c *gin.Context) {
	v, err := h.articles.Favorite(c.Request.Context(), viewerID(c), c.Param("slug"))
	h.respondOne(c, http.StatusOK, v, err)
}

// Unfavorite handles DELETE /api/articles/:slug/favorite.
func (h *ArticleHandler) Unfavorite(c *gin.Context) {
	v, err := h.articles.Unfavorite(c.Request.Context(), viewerID(c), c.Param("slug"))
	h.respondOne(c, http.StatusOK, v, err)
}

// List handles GET /api/articles?tag=&author=&favorited=&limit=&offset=&cursor=.
func (h *ArticleHandler) List(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	if unstorableFilter(c) {
		h.respondList(c, service.ArticleList{Articles: []domain.ArticleView{}}, nil)
		return
	}
	in := service.ListInput{Tag: c.Query("tag"), Author: c.Query("author"), Favorited: c.Query("favorited"), Page: p}
	if viewerID(c) == 0 && h.serveKeptList(c, in) {
		return
	}
	l, err := h.articles.List(c.Request.Context(), viewerID(c), in)
	h.respondList(c, l, err)
}

// Feed handles GET /api/articles/feed?limit=&offset=&cursor=.
func (h *ArticleHandler) Feed(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	l, err := h.articles.Feed(c.Request.Context(), viewerID(c), p)
	h.respondList(c, l, err)
}

// Mine handles GET /api/user/articles?status=&limit=&offset=. It pages by offset only.
func (h *ArticleHandler) Mine(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	var status domain.ArticleStatus
	if s := c.Query("status"); s != "" {
		st, ok := domain.ParseArticleStatus(s)
		if !ok {
			abortWith(c, http.StatusUnprocessableEntity, "status", "must be draft, published, scheduled or withdrawn")
			return
		}
		status = st
	}
	l, err := h.articles.Mine(c.Request.Context(), viewerID(c), status, p)
	h.respondList(c, l, err)
}

// Tags handles GET /api/tags.
func (h *ArticleHandler) Tags(c *gin.Context) {
	tags, err := h.articles.Tags(c.Request.Context())
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	if tags == nil {
		tags = []string{}
	}
	renderJSON(c, http.StatusOK, gin.H{"tags": tags})
}

func (h *ArticleHandler) respondOne(c *gin.Context, status int, v domain.ArticleView, err error) {
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderAppended(c, status, func(b []byte) []byte { return h.docs.appendOne(b, v) })
}

func (h *ArticleHandler) respondList(c *gin.Context, l service.ArticleList, err error) {
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderAppended(c, http.StatusOK, func(b []byte) []byte { return h.docs.appendList(b, l) })
}
