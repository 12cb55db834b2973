package repository

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/revisions"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
)

// Cache lifetimes chosen by the article repository.
const (
	preloadTTL = time.Minute // a guess: the author will likely open their newest article
	maxTags    = 100         // size of the tag cloud
)

// ArticleRepository stores articles in PostgreSQL with a read-through cache for details, caches
// of each author's first page and of the global and per-tag first pages, and a cached tag cloud.
type ArticleRepository struct {
	pool  *pgxpool.Pool
	q     dao.Querier
	cache *cache.ArticleCache
	pages *cache.AuthorPageCache
	lists *cache.ListPageCache
	tags  *cache.TagsCache
	lang  search.Language  // the text search configuration the writes index in
	revs  *revisions.Store // keeps the version an edit replaces, in the edit's unit of work
	reads *pg.ReadRouter   // nil: every read on pool
	log   *slog.Logger
}

// NewArticleRepository returns the repository.
// Reads that tolerate a little lag go through reads (a read replica when one has replayed enough;
// nil: the pool).
func NewArticleRepository(pool *pgxpool.Pool, q dao.Querier, c *cache.ArticleCache, pages *cache.AuthorPageCache, lists *cache.ListPageCache, tags *cache.TagsCache, lang search.Language, log *slog.Logger, reads *pg.ReadRouter) *ArticleRepository {
	return &ArticleRepository{pool: pool, q: q, cache: c, pages: pages, lists: lists, tags: tags, lang: lang, revs: revisions.NewStore(pool, q, reads), reads: reads, log: log}
}

// reader is the connection a read that tolerates a little lag runs on (pg.ReadRouter).
func (r *ArticleRepository) reader(ctx context.Context) dao.DBTX {
	return pg.ReadsOn(ctx, r.reads, r.pool)
}

// Create inserts the article in a unit of work of its own (see CreateIn).
func (r *ArticleRepository) Create(ctx context.Context, a domain.Article) (domain.Article, error) {
	var created domain.Article
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		var err error
		created, err = r.CreateIn(ctx, tx, a)
		return err
	})
	return created, err
}

// CreateIn inserts the article, its comment counter and, when it is published at once, the
// publish event for the outbox, in the caller's unit of work. Its statements run in a savepoint,
// so a taken slug (domain.ErrSlugTaken) leaves the unit of work usable for another try.
func (r *ArticleRepository) CreateIn(ctx context.Context, stx service.Tx, a domain.Article) (domain.Article, error) {
	tx := pg.TxOf(stx)
	var row dao.ArticleGetBySlugRow
	err := tx.Savepoint(ctx, func(db pgx.Tx) error {
		inserted, err := r.q.ArticleInsert(ctx, db, dao.ArticleInsertParams{
			Slug: a.Slug, AuthorID: a.AuthorID, Title: a.Title, Description: a.Description, Body: a.Body,
			TagList: nonNilTags(a.Tags), CoverImage: a.CoverImage, Status: string(a.Status), SearchConfig: string(r.lang),
		})
		row = dao.ArticleGetBySlugRow(inserted)
		if err != nil {
			return pg.Wrapf(err, "insert article %q", a.Slug)
		}
		if err := r.q.CommentSeqInit(ctx, db, row.ID); err != nil {
			return pg.Wrapf(err, "init comment numbering of article %d", row.ID)
		}
		if a.Uploads != nil {
			if err := replaceUploadReferences(ctx, r.q, db, uploadOwnerArticle, row.ID, a.Uploads); err != nil {
				return err
			}
		}
		if row.Status == string(domain.StatusPublished) {
			return durable.WriteArticleEvent(ctx, r.q, db, domain.TopicArticlePublished, articleFromRow(row))
		}
		return nil
	})
	if err != nil {
		return domain.Article{}, err
	}
	created := articleFromRow(row)
	// A read of this slug just before the insert may have left a null marker behind; a published
	// article replaces it by warming, a draft must drop it or its author gets 404 until it expires.
	r.afterWrite(tx, created, created.Slug)
	return created, nil
}

// GetBySlug returns the full article through the cache.
func (r *ArticleRepository) GetBySlug(ctx context.Context, slug string) (domain.Article, error) {
	return r.cache.BySlug(ctx, slug, r.loadBySlug(slug))
}

// GetBySlugs returns the full articles among slugs that exist, by slug, through the cache (one
// query for the misses).
func (r *ArticleRepository) GetBySlugs(ctx context.Context, slugs []string) (map[string]domain.Article, error) {
	return r.cache.BySlugs(ctx, slugs, func(ctx context.Context, slugs []string) (map[string]domain.Article, error) {
		rows, err := r.q.ArticleGetBySlugs(ctx, r.reader(ctx), slugs)
		if err != nil {
			return nil, pg.Wrapf(err, "get %d articles by slug", len(slugs))
		}
		out := make(map[string]domain.Article, len(rows))
		for _, row := range rows {
			out[row.Slug] = articleFromRow(dao.ArticleGetBySlugRow(row))
		}
		return out, nil
	})
}

// loadBySlug reads slug's article from PostgreSQL (the cache's loader).
func (r *ArticleRepository) loadBySlug(slug string) func(context.Context) (domain.Article, error) {
	return func(ctx context.Context) (domain.Article, error) {
		row, err := r.q.ArticleGetBySlug(ctx, r.reader(ctx), slug)
		if err != nil {
			return domain.Article{}, pg.Wrapf(err, "get article %q", slug)
		}
		return articleFromRow(row), nil
	}
}

// Update locks the article, applies change and writes the content guarded by the version it read.
// When the article keeps revisions (domain.Article.KeepsRevisions), the version replaced is kept
// in the same unit of work (repository/revisions), so a failed edit keeps nothing.
func (r *ArticleRepository) Update(ctx context.Context, id int64, change func(*domain.Article) error) (domain.Article, error) {
	var row dao.ArticleGetBySlugRow
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		locked, err := r.q.ArticleGetByIDForUpdate(ctx, tx, id)
		if err != nil {
			return pg.Wrapf(err, "lock article %d", id)
		}
		a := articleFromRow(dao.ArticleGetBySlugRow(locked))
		if err := change(&a); err != nil {
			return err
		}
		updated, err := r.q.ArticleUpdateContent(ctx, tx, dao.ArticleUpdateContentParams{
			ID: id, ExpectedVersion: locked.Version,
			Title: a.Title, Description: a.Description, Body: a.Body, TagList: nonNilTags(a.Tags), CoverImage: a.CoverImage,
			SearchConfig: string(r.lang),
		})
		row = dao.ArticleGetBySlugRow(updated)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: article %d changed concurrently", domain.ErrStaleVersion, id)
		}
		if err != nil {
			return pg.Wrapf(err, "update article %d", id)
		}
		if before := articleFromRow(dao.ArticleGetBySlugRow(locked)); before.KeepsRevisions() {
			if err := r.revs.WriteIn(ctx, tx, domain.RevisionOf(before)); err != nil {
				return err
			}
		}
		if a.Uploads != nil {
			if err := replaceUploadReferences(ctx, r.q, tx, uploadOwnerArticle, id, a.Uploads); err != nil {
				return err
			}
		}
		after := articleFromRow(row)
		r.afterWrite(tx, after, row.Slug, locked.TagList...)
		if after.Status == domain.StatusPublished && !after.Moderation.Hidden {
			// Webhooks (#33) hear of edits of what the public sees; notifications ignore the topic.
			return durable.WriteArticleEvent(ctx, r.q, tx, domain.TopicArticleUpdated, after)
		}
		return nil
	})
	if err != nil {
		return domain.Article{}, err
	}
	return articleFromRow(row), nil
}

// Transition changes the status only from one of the allowed statuses (the guard is in the SQL)
// and records the matching event in the outbox, in one transaction.
func (r *ArticleRepository) Transition(ctx context.Context, id int64, from []domain.ArticleStatus, to domain.ArticleStatus) (domain.Article, error) {
	fromNames := make([]string, len(from))
	for i, s := range from {
		fromNames[i] = string(s)
	}
	var row dao.ArticleGetBySlugRow
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		moved, err := r.q.ArticleTransition(ctx, tx, dao.ArticleTransitionParams{
			ID: id, ToStatus: string(to), FromStatuses: fromNames, SearchConfig: string(r.lang),
		})
		row = dao.ArticleGetBySlugRow(moved)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: article %d cannot move to %s from its current status", domain.ErrIllegalTransition, id, to)
		}
		if err != nil {
			return pg.Wrapf(err, "move article %d to %s", id, to)
		}
		topic := domain.TopicArticlePublished
		if to == domain.StatusWithdrawn {
			topic = domain.TopicArticleWithdrawn
		}
		return r.moved(ctx, tx, articleFromRow(row), topic)
	})
	if err != nil {
		return domain.Article{}, err
	}
	return articleFromRow(row), nil
}

// moved finishes a status change in tx: the caches follow at commit, and the event others hear
// of goes to the outbox (a manual publish or withdrawal, and the scheduled publish, #32).
func (r *ArticleRepository) moved(ctx context.Context, tx *pg.Tx, after domain.Article, topic string) error {
	r.afterWrite(tx, after, after.Slug)
	if after.Moderation.Hidden {
		return nil // nobody but its author sees it: nothing happened that others hear of
	}
	return durable.WriteArticleEvent(ctx, r.q, tx, topic, after)
}

// Delete removes the article; comments go by cascade, likes, counters and the outbox event in the
// same transaction. The likes and the counter rows go first: a like in flight holds its rows
// while its trigger waits for the article's lock, which the article's delete takes (its trigger),
// so taking the rows after that lock would wait on each other in a circle.
func (r *ArticleRepository) Delete(ctx context.Context, a domain.Article) error {
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		item := string(domain.BizArticle)
		if err := r.q.InteractiveDelete(ctx, tx, dao.InteractiveDeleteParams{Biz: item, BizID: a.ID}); err != nil {
			return pg.Wrapf(err, "delete counters of article %d", a.ID)
		}
		if err := r.q.LikeDeleteByItem(ctx, tx, dao.LikeDeleteByItemParams{Biz: item, BizID: a.ID}); err != nil {
			return pg.Wrapf(err, "delete likes of article %d", a.ID)
		}
		n, err := r.q.ArticleDelete(ctx, tx, a.ID)
		if err != nil {
			return pg.Wrapf(err, "delete article %d", a.ID)
		}
		if n == 0 {
			return domain.ErrNotFound
		}
		if err := replaceUploadReferences(ctx, r.q, tx, uploadOwnerArticle, a.ID, nil); err != nil {
			return err
		}
		r.afterWrite(tx, domain.Article{AuthorID: a.AuthorID}, a.Slug, a.Tags...)
		return durable.WriteArticleEvent(ctx, r.q, tx, domain.TopicArticleDeleted, a)
	})
	return err
}

// combinedCountCap bounds articlesCount of a list filtered two or three ways at once: those
// counts have no counts row, and counting them exactly would read every match.
const combinedCountCap = 10_000

// ListPublished lists one page of published article summaries and the filter's articlesCount.
// A single filter (or none) reads its page off its own ordered index and its count off a counts
// row; filters combined walk the global order and count at most combinedCountCap matches. The
// global and per-tag first pages of the default size come through the first-page cache.
func (r *ArticleRepository) ListPublished(ctx context.Context, q service.ArticleQuery) (service.ArticlePage, error) {
	if q.Page.Offset == 0 && q.Page.Cursor == nil && q.Page.Limit == domain.DefaultPageLimit && q.AuthorID == 0 && q.FavoritedBy == 0 {
		load := func(ctx context.Context) (cache.ListPage, error) {
			p, err := r.listPublished(ctx, q)
			return cache.ListPage(p), err
		}
		var p cache.ListPage
		var err error
		if q.Tag == "" {
			p, err = r.lists.Global(ctx, load)
		} else {
			p, err = r.lists.Tag(ctx, q.Tag, load)
		}
		return service.ArticlePage(p), err
	}
	return r.listPublished(ctx, q)
}

func (r *ArticleRepository) listPublished(ctx context.Context, q service.ArticleQuery) (service.ArticlePage, error) {
	db := r.reader(ctx)
	before, beforeID, off := keyset(q.Page)
	lim := probe(q.Page)
	var (
		arts  []domain.Article
		total int64
		err   error
	)
	switch {
	case q.Tag == "" && q.AuthorID == 0 && q.FavoritedBy == 0:
		var rows []dao.ArticleListPublishedRow
		rows, err = r.q.ArticleListPublished(ctx, db, dao.ArticleListPublishedParams{BeforeCreatedAt: before, BeforeID: beforeID, Lim: lim, Off: off})
		arts = summariesFrom(rows, func(r dao.ArticleListPublishedRow) dao.ArticleListByAuthorRow { return dao.ArticleListByAuthorRow(r) })
		if err == nil {
			total, err = countRow(r.q.ArticleCountsSite(ctx, db))
		}
	case q.AuthorID == 0 && q.FavoritedBy == 0:
		var rows []dao.ArticleListByTagRow
		rows, err = r.q.ArticleListByTag(ctx, db, dao.ArticleListByTagParams{Tag: q.Tag, BeforeCreatedAt: before, BeforeID: beforeID, Lim: lim, Off: off})
		arts = summariesFrom(rows, func(r dao.ArticleListByTagRow) dao.ArticleListByAuthorRow { return dao.ArticleListByAuthorRow(r) })
		if err == nil {
			total, err = countRow(r.q.ArticleCountsByTag(ctx, db, q.Tag))
		}
	case q.Tag == "" && q.FavoritedBy == 0:
		var rows []dao.ArticleListPublishedByAuthorRow
		rows, err = r.q.ArticleListPublishedByAuthor(ctx, db, dao.ArticleListPublishedByAuthorParams{AuthorID: q.AuthorID, BeforeCreatedAt: before, BeforeID: beforeID, Lim: lim, Off: off})
		arts = summariesFrom(rows, func(r dao.ArticleListPublishedByAuthorRow) dao.ArticleListByAuthorRow {
			return dao.ArticleListByAuthorRow(r)
		})
		if err == nil {
			var c dao.ArticleCountsByAuthorRow
			c, err = countRow(r.q.ArticleCountsByAuthor(ctx, db, q.AuthorID))
			total = c.Published
		}
	case q.Tag == "" && q.AuthorID == 0:
		var rows []dao.ArticleListFavoritedRow
		rows, err = r.q.ArticleListFavorited(ctx, db, dao.ArticleListFavoritedParams{UserID: q.FavoritedBy, BeforeCreatedAt: before, BeforeID: beforeID, Lim: lim, Off: off})
		arts = summariesFrom(rows, func(r dao.ArticleListFavoritedRow) dao.ArticleListByAuthorRow { return dao.ArticleListByAuthorRow(r) })
		if err == nil {
			total, err = countRow(r.q.ArticleCountsFavorited(ctx, db, q.FavoritedBy))
		}
	default:
		tag, author, fav := optText(q.Tag), optInt(q.AuthorID), optInt(q.FavoritedBy)
		var rows []dao.ArticleListFilteredRow
		rows, err = r.q.ArticleListFiltered(ctx, db, dao.ArticleListFilteredParams{
			Tag: tag, AuthorID: author, FavoritedBy: fav, BeforeCreatedAt: before, BeforeID: beforeID, Lim: lim, Off: off,
		})
		arts = summariesFrom(rows, func(r dao.ArticleListFilteredRow) dao.ArticleListByAuthorRow { return dao.ArticleListByAuthorRow(r) })
		if err == nil {
			total, err = r.q.ArticleCountFiltered(ctx, db, dao.ArticleCountFilteredParams{Tag: tag, AuthorID: author, FavoritedBy: fav, Cap: combinedCountCap})
		}
	}
	if err != nil {
		return service.ArticlePage{}, pg.Wrapf(err, "list articles")
	}
	return cutPage(arts, total, q.Page), nil
}

// Feed lists one page of the published article summaries by the authors followerID follows;
// its count sums the followed authors' counts rows. The first page of the default size comes
// through the first-page cache, under the feed's stamp (cache.FeedStamps), made before any query;
// when Redis cannot make it, PostgreSQL answers.
func (r *ArticleRepository) Feed(ctx context.Context, followerID int64, p domain.Page) (service.ArticlePage, error) {
	if p.Offset == 0 && p.Cursor == nil && p.Limit == domain.DefaultPageLimit {
		followees := func(ctx context.Context) ([]int64, error) {
			ids, err := r.q.FollowListFolloweeIDs(ctx, r.pool, followerID)
			return ids, pg.Wrapf(err, "list followees of %d", followerID)
		}
		page, ok, err := r.lists.Feed(ctx, followerID, followees, func(ctx context.Context) (cache.ListPage, error) {
			// Filed under a stamp made from the authors' change tokens: only the primary is surely
			// as new as the newest token in it.
			page, err := r.feed(domain.WithPrimaryReads(ctx), followerID, p)
			return cache.ListPage(page), err
		})
		if ok {
			return service.ArticlePage(page), err
		}
	}
	return r.feed(ctx, followerID, p)
}

func (r *ArticleRepository) feed(ctx context.Context, followerID int64, p domain.Page) (service.ArticlePage, error) {
	total, err := r.feedCount(ctx, followerID)
	if err != nil {
		return service.ArticlePage{}, err
	}
	arts, err := r.feedPage(ctx, followerID, p)
	if err != nil {
		return service.ArticlePage{}, err
	}
	return cutPage(arts, total, p), nil
}

func (r *ArticleRepository) feedCount(ctx context.Context, followerID int64) (int64, error) {
	total, err := r.q.ArticleCountFeed(ctx, r.reader(ctx), followerID)
	return total, pg.Wrapf(err, "count feed of %d", followerID)
}

func (r *ArticleRepository) feedPage(ctx context.Context, followerID int64, p domain.Page) ([]domain.Article, error) {
	before, beforeID, off := keyset(p)
	rows, err := r.q.ArticleListFeed(ctx, r.reader(ctx), dao.ArticleListFeedParams{
		FollowerID: followerID, BeforeCreatedAt: before, BeforeID: beforeID, Lim: probe(p), Off: off, Depth: probe(p) + off,
	})
	if err != nil {
		return nil, pg.Wrapf(err, "list feed of %d", followerID)
	}
	return summariesFrom(rows, func(r dao.ArticleListFeedRow) dao.ArticleListByAuthorRow { return dao.ArticleListByAuthorRow(r) }), nil
}

// ListByAuthor lists an author's own summaries, after p's cursor or offset. The first page with
// the default limit is served from the author-page cache.
func (r *ArticleRepository) ListByAuthor(ctx context.Context, authorID int64, status domain.ArticleStatus, p domain.Page) (service.ArticlePage, error) {
	firstPage := p.Offset == 0 && p.Cursor == nil && p.Limit == domain.DefaultPageLimit
	var cached cache.AuthorPage
	if firstPage {
		var err error
		if cached, err = r.pages.Get(ctx, authorID, status); err != nil {
			r.log.WarnContext(ctx, "author page cache read failed, serving from the database", "author_id", authorID, "err", err)
			firstPage = false // Redis is failing: don't write back
		}
		if cached.Found {
			return service.ArticlePage{Articles: cached.Articles, Total: cached.Total, More: cached.More}, nil
		}
	}
	readCtx := ctx
	if firstPage {
		// The author-page cache's guard is a token in the page's hash, not a tombstone: a fill
		// reads the primary (pg.ReadRouter; cache.fillContext says why).
		readCtx = domain.WithPrimaryReads(ctx)
	}
	out, err := r.listByAuthor(readCtx, authorID, status, p)
	if err != nil {
		return service.ArticlePage{}, err
	}
	if firstPage {
		if _, err := r.pages.Fill(ctx, authorID, status, cached, out.Articles, out.Total, out.More); err != nil {
			r.log.WarnContext(ctx, "author page cache write failed", "author_id", authorID, "err", err)
		}
	}
	return out, nil
}

func (r *ArticleRepository) listByAuthor(ctx context.Context, authorID int64, status domain.ArticleStatus, p domain.Page) (service.ArticlePage, error) {
	db := r.reader(ctx)
	before, beforeID, off := keyset(p)
	lim := probe(p)
	var (
		out []domain.Article
		err error
	)
	if status == "" {
		var rows []dao.ArticleListByAuthorRow
		rows, err = r.q.ArticleListByAuthor(ctx, db, dao.ArticleListByAuthorParams{
			AuthorID: authorID, BeforeCreatedAt: before, BeforeID: beforeID, Lim: lim, Off: off, Depth: lim + off,
		})
		out = summariesFrom(rows, func(r dao.ArticleListByAuthorRow) dao.ArticleListByAuthorRow { return r })
	} else {
		var rows []dao.ArticleListByAuthorStatusRow
		rows, err = r.q.ArticleListByAuthorStatus(ctx, db, dao.ArticleListByAuthorStatusParams{
			AuthorID: authorID, Status: string(status), BeforeCreatedAt: before, BeforeID: beforeID, Lim: lim, Off: off,
		})
		out = summariesFrom(rows, func(r dao.ArticleListByAuthorStatusRow) dao.ArticleListByAuthorRow {
			return dao.ArticleListByAuthorRow(r)
		})
	}
	if err != nil {
		return service.ArticlePage{}, pg.Wrapf(err, "list articles of %d", authorID)
	}
	c, err := countRow(r.q.ArticleCountsByAuthor(ctx, db, authorID))
	if err != nil {
		return service.ArticlePage{}, pg.Wrapf(err, "count articles of %d", authorID)
	}
	total := c.Drafts + c.Published + c.Withdrawn
	if status == "" || status == domain.StatusScheduled {
		scheduled, err := r.q.ArticleCountScheduledByAuthor(ctx, db, authorID)
		if err != nil {
			return service.ArticlePage{}, pg.Wrapf(err, "count scheduled articles of %d", authorID)
		}
		total += scheduled
		if status == domain.StatusScheduled {
			total = scheduled
		}
	}
	if status == "" || status == domain.StatusHidden {
		hidden, err := r.q.ArticleCountHiddenByAuthor(ctx, db, authorID)
		if err != nil {
			return service.ArticlePage{}, pg.Wrapf(err, "count hidden articles of %d", authorID)
		}
		total += hidden
		if status == domain.StatusHidden {
			total = hidden
		}
	}
	switch status {
	case domain.StatusDraft:
		total = c.Drafts
	case domain.StatusPublished:
		total = c.Published
	case domain.StatusWithdrawn:
		total = c.Withdrawn
	}
	return cutPage(out, total, p), nil
}

// Tags returns the most used tags of published articles, through the cache.
func (r *ArticleRepository) Tags(ctx context.Context) ([]string, error) {
	return r.tags.Get(ctx, func(ctx context.Context) ([]string, error) {
		tags, err := r.q.TagListPopular(ctx, r.pool, maxTags)
		return tags, pg.Wrapf(err, "list tags")
	})
}

// Preload puts slug's full detail into the cache for a short while, unless an entry exists (a
// guess that it will be read soon: it never replaces fresher data). An article that does not
// exist, or a Redis that fails, leaves nothing to do.
func (r *ArticleRepository) Preload(ctx context.Context, slug string) error {
	return r.cache.Preload(ctx, slug, preloadTTL, r.loadBySlug(slug))
}

// afterWrite brings the caches in line with tx's write once it has committed: drop (or, on
// publish, warm) the detail entry and drop the author's cached pages. Failures only cost freshness
// until the TTL, so they are logged.
func (r *ArticleRepository) afterWrite(tx *pg.Tx, a domain.Article, invalidateSlug string, formerTags ...string) {
	tx.AfterCommit(func(ctx context.Context) { r.syncCaches(ctx, a, invalidateSlug, formerTags) })
}

func (r *ArticleRepository) syncCaches(ctx context.Context, a domain.Article, invalidateSlug string, formerTags []string) {
	ctx = context.WithoutCancel(ctx)
	warm := a.Public() && a.ID != 0
	if invalidateSlug != "" && (!warm || invalidateSlug != a.Slug) { // a warm-up invalidates its slug itself
		if err := r.cache.Invalidate(ctx, invalidateSlug); err != nil {
			r.log.WarnContext(ctx, "article cache invalidation failed", "slug", invalidateSlug, "err", err)
		}
	}
	if warm {
		if err := r.cache.Refresh(ctx, a.Slug, r.loadBySlug(a.Slug)); err != nil {
			r.log.WarnContext(ctx, "article cache warm-up failed", "slug", a.Slug, "err", err)
		}
	}
	if err := r.pages.Invalidate(ctx, a.AuthorID); err != nil {
		r.log.WarnContext(ctx, "author page cache invalidation failed", "author_id", a.AuthorID, "err", err)
	}
	// Any of these writes can change the first pages the article is or was on.
	if err := r.lists.Invalidate(ctx, append(slices.Clone(a.Tags), formerTags...)...); err != nil {
		r.log.WarnContext(ctx, "first page cache invalidation failed", "slug", invalidateSlug, "err", err)
	}
	if err := r.lists.AuthorChanged(ctx, a.AuthorID); err != nil {
		r.log.WarnContext(ctx, "feed stamp change failed: followers may see their cached feed unchanged for up to a minute", "author_id", a.AuthorID, "err", err)
	}
	// Publish, withdraw, delete and tag edits all change which tags are in use; every instance
	// keeps the cloud in process, so such a write answers once they have all dropped it. A draft's
	// or a scheduled article's edit is in no cloud.
	dropTags := r.tags.Invalidate
	if a.Public() || a.Status == domain.StatusWithdrawn || a.ID == 0 {
		dropTags = r.tags.InvalidateEverywhere
	}
	if err := dropTags(ctx); err != nil {
		r.log.WarnContext(ctx, "tag cloud invalidation failed", "err", err)
	}
}

func articleFromRow(row dao.ArticleGetBySlugRow) domain.Article {
	a := summaryFromRow(dao.ArticleListByAuthorRow{
		ID: row.ID, Slug: row.Slug, AuthorID: row.AuthorID, Title: row.Title, Description: row.Description,
		TagList: row.TagList, Status: row.Status, Version: row.Version, CreatedAt: row.CreatedAt,
		UpdatedAt: row.UpdatedAt, PublishedAt: row.PublishedAt, HiddenStatus: row.HiddenStatus, HiddenReason: row.HiddenReason,
		CoverImage: row.CoverImage, PublishAt: row.PublishAt,
	})
	a.Body = row.Body
	return a
}

func summaryFromRow(row dao.ArticleListByAuthorRow) domain.Article {
	a := domain.Article{
		ID: row.ID, Slug: row.Slug, AuthorID: row.AuthorID, Title: row.Title, Description: row.Description,
		Tags: nonNilTags(row.TagList), Status: domain.ArticleStatus(row.Status), Version: row.Version,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, CoverImage: row.CoverImage,
	}
	if row.PublishedAt.Valid {
		t := row.PublishedAt.Time
		a.PublishedAt = &t
	}
	if row.PublishAt.Valid {
		t := row.PublishAt.Time
		a.PublishAt = &t
	}
	if a.Status == domain.StatusHidden {
		// The reader sees the author's status; that a moderator hid it is said beside it.
		a.Status = domain.ArticleStatus(row.HiddenStatus.String)
		a.Moderation = domain.ContentModeration{Hidden: true, Reason: row.HiddenReason.String}
	}
	return a
}

func nonNilTags(t []string) []string {
	if t == nil {
		return []string{}
	}
	return t
}

func optText(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

func optInt(id int64) pgtype.Int8 { return pgtype.Int8{Int64: id, Valid: id != 0} }

// beforeEverything is the cursor of a first page: later than any row's (created_at, id). The
// lists compare with a cursor always, rather than only when there is one, so that a generic plan
// keeps it as an index condition.
var beforeEverything = domain.Cursor{CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), ID: math.MaxInt64}

// cursorOrFirst is after, or a first page's cursor when there is none.
func cursorOrFirst(after *domain.Cursor) domain.Cursor {
	if after == nil {
		return beforeEverything
	}
	return *after
}

// keyset turns a page into the query's cursor arguments; with a cursor the offset is ignored.
func keyset(p domain.Page) (time.Time, int64, int32) {
	if p.Cursor == nil {
		return beforeEverything.CreatedAt, beforeEverything.ID, int32(p.Offset)
	}
	return p.Cursor.CreatedAt, p.Cursor.ID, 0
}

// probe is how many rows a list reads for page p: one more than it shows, so that it knows
// whether a next page exists (cutPage).
func probe(p domain.Page) int32 { return int32(p.Limit) + 1 }

// cutPage makes the page of a list read with probe(p) rows.
func cutPage(arts []domain.Article, total int64, p domain.Page) service.ArticlePage {
	arts, more := domain.CutPage(arts, p.Limit)
	return service.ArticlePage{Articles: arts, Total: total, More: more}
}

// summariesFrom converts one list query's rows (each list has its own row type, all with the
// summary's columns) to domain summaries.
func summariesFrom[R any](rows []R, conv func(R) dao.ArticleListByAuthorRow) []domain.Article {
	out := make([]domain.Article, len(rows))
	for i, row := range rows {
		out[i] = summaryFromRow(conv(row))
	}
	return out
}

// countRow reads a counts row, whose absence means nothing was ever counted there: zero.
func countRow[T any](v T, err error) (T, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		var zero T
		return zero, nil
	}
	return v, err
}

// GetByIDs returns the summaries (no bodies) of the articles among ids that exist, in one query.
func (r *ArticleRepository) GetByIDs(ctx context.Context, ids []int64) ([]domain.Article, error) {
	if len(ids) == 0 {
		return []domain.Article{}, nil
	}
	rows, err := r.q.ArticleGetByIDs(ctx, r.reader(ctx), ids)
	if err != nil {
		return nil, pg.Wrapf(err, "get %d articles", len(ids))
	}
	return summariesFrom(rows, func(r dao.ArticleGetByIDsRow) dao.ArticleListByAuthorRow { return dao.ArticleListByAuthorRow(r) }), nil
}
