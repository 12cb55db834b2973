package repository

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// SearchLanguage is the PostgreSQL text search configuration articles are indexed and searched
// in (INKWELL_SEARCH_LANGUAGE), as PostgreSQL names it.
type SearchLanguage string

// CheckSearchLanguage returns name as a text search configuration of the database, or an error
// naming the setting when there is none by that name (the server refuses to start with it).
func CheckSearchLanguage(ctx context.Context, pool *pgxpool.Pool, name string) (SearchLanguage, error) {
	got, err := dao.New().ArticleSearchLanguage(ctx, pool, name)
	if err != nil {
		return "", fmt.Errorf("INKWELL_SEARCH_LANGUAGE %q is not a text search configuration of this database (SELECT cfgname FROM pg_ts_config lists them): %w", name, err)
	}
	return SearchLanguage(got), nil
}

// SearchRepository runs article searches: the ranking query, then the snippets of the page, and
// for anonymous readers a short-lived cache of hit lists hydrated through the article cache.
type SearchRepository struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	lang     SearchLanguage
	articles *ArticleRepository
	hits     *cache.SearchCache
	log      *slog.Logger
}

// NewSearchRepository returns the repository.
func NewSearchRepository(pool *pgxpool.Pool, q dao.Querier, lang SearchLanguage, articles *ArticleRepository, hits *cache.SearchCache, log *slog.Logger) *SearchRepository {
	return &SearchRepository{pool: pool, q: q, lang: lang, articles: articles, hits: hits, log: log}
}

// Search returns one page of hits. A shared (anonymous) page comes from the hit-list cache when
// it is there; its articles are then read through the article cache, and any that is no longer
// published is left out. Redis failing only means PostgreSQL answers.
func (r *SearchRepository) Search(ctx context.Context, q service.SearchQuery) (service.SearchPage, error) {
	if !q.Shared {
		return r.search(ctx, q)
	}
	key := searchKey(q)
	e, ok, err := r.hits.Get(ctx, key)
	if err != nil {
		r.log.WarnContext(ctx, "search cache read failed, searching the database", "err", err)
	}
	if ok {
		if page, err := r.hydrate(ctx, e); err == nil {
			return page, nil
		} else {
			r.log.WarnContext(ctx, "cached search hits could not be read, searching the database", "err", err)
		}
	}
	page, err := r.search(ctx, q)
	if err != nil {
		return service.SearchPage{}, err
	}
	if err == nil && !ok {
		if err := r.hits.Set(ctx, key, entryOf(page)); err != nil {
			r.log.WarnContext(ctx, "search cache write failed", "err", err)
		}
	}
	return page, nil
}

// searchKey hashes everything that decides a page: the terms, filters, limit and position.
func searchKey(q service.SearchQuery) string {
	var b strings.Builder
	b.WriteString(q.Terms.Key())
	fmt.Fprintf(&b, "\x00%s\x00%d\x00%d", q.Tag, q.AuthorID, q.Limit)
	if c := q.After; c != nil {
		fmt.Fprintf(&b, "\x00%d\x00%s\x00%d\x00%d", c.Snapshot.UnixMicro(), strconv.FormatFloat(c.Score, 'g', -1, 64), c.ID, c.Total)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

func entryOf(p service.SearchPage) cache.SearchEntry {
	e := cache.SearchEntry{Hits: make([]cache.SearchEntryHit, len(p.Hits)), Total: p.Total, Next: p.Next}
	for i, h := range p.Hits {
		e.Hits[i] = cache.SearchEntryHit{ID: h.Article.ID, Slug: h.Article.Slug, Score: h.Score, Snippet: h.Snippet}
	}
	return e
}

// hydrate turns a cached page back into hits, through the article cache (coherent with every
// write on every instance): an article withdrawn or deleted since the page was cached is dropped.
func (r *SearchRepository) hydrate(ctx context.Context, e cache.SearchEntry) (service.SearchPage, error) {
	slugs := make([]string, len(e.Hits))
	for i, h := range e.Hits {
		slugs[i] = h.Slug
	}
	arts, err := r.articles.getBySlugs(ctx, slugs)
	if err != nil {
		return service.SearchPage{}, err
	}
	page := service.SearchPage{Hits: make([]domain.SearchHit, 0, len(e.Hits)), Total: e.Total, Next: e.Next}
	for _, h := range e.Hits {
		a, ok := arts[h.Slug]
		if !ok || a.ID != h.ID || a.Status != domain.StatusPublished {
			continue
		}
		a.Body = "" // a list carries summaries
		page.Hits = append(page.Hits, domain.SearchHit{Article: a, Score: h.Score, Snippet: h.Snippet})
	}
	return page, nil
}

// firstSearchPage is the position before every hit.
var firstSearchPage = domain.SearchCursor{Score: math.Inf(1), ID: math.MaxInt64}

func (r *SearchRepository) search(ctx context.Context, q service.SearchQuery) (service.SearchPage, error) {
	after := firstSearchPage
	var snapshot pgtype.Timestamptz // none: the query takes now(), and returns it for the cursor
	if q.After != nil {
		after = *q.After
		snapshot = pgtype.Timestamptz{Time: q.After.Snapshot, Valid: true}
	}
	// A custom plan every time: whether to walk the newest articles or the GIN index depends on
	// how common the words are, which a generic plan (pgx prepares statements) cannot know.
	db := customPlan{r.pool}
	rows, err := r.q.ArticleSearch(ctx, db, dao.ArticleSearchParams{
		SearchConfig: string(r.lang), Words: q.Terms.Words, Cjk: q.Terms.CJKQuery(),
		Snapshot: snapshot, Tag: optText(q.Tag), AuthorID: optInt(q.AuthorID), Depth: domain.SearchDepth,
		AfterScore: after.Score, AfterID: after.ID, Lim: int32(q.Limit),
	})
	if err != nil {
		return service.SearchPage{}, wrapf(err, "search articles")
	}
	page := service.SearchPage{Hits: make([]domain.SearchHit, len(rows))}
	ids := make([]int64, len(rows))
	for i, row := range rows {
		page.Hits[i] = domain.SearchHit{Score: row.Score, Article: summaryFromRow(dao.ArticleListByAuthorRow{
			ID: row.ID, Slug: row.Slug, AuthorID: row.AuthorID, Title: row.Title, Description: row.Description,
			TagList: row.TagList, Status: row.Status, Version: row.Version, CreatedAt: row.CreatedAt,
			UpdatedAt: row.UpdatedAt, PublishedAt: row.PublishedAt,
		})}
		ids[i] = row.ID
		page.Total = row.Total
	}
	if q.After != nil {
		page.Total = q.After.Total // the first page's count, whatever page this is
	}
	if len(rows) == 0 {
		return page, nil
	}
	if len(rows) == q.Limit {
		last := rows[len(rows)-1]
		page.Next = &domain.SearchCursor{Snapshot: last.Snapshot, Score: last.Score, ID: last.ID, Total: page.Total}
	}
	if err := r.snippets(ctx, q.Terms, ids, page.Hits); err != nil {
		return service.SearchPage{}, err
	}
	return page, nil
}

// snippets fills in the hits' snippets with one query for the page.
func (r *SearchRepository) snippets(ctx context.Context, t domain.SearchTerms, ids []int64, hits []domain.SearchHit) error {
	rows, err := r.q.ArticleSearchSnippets(ctx, r.pool, dao.ArticleSearchSnippetsParams{
		SearchConfig: string(r.lang), Words: t.Words, WithText: len(t.CJK) > 0, Ids: ids,
	})
	if err != nil {
		return wrapf(err, "search snippets")
	}
	byID := make(map[int64]string, len(rows))
	for _, row := range rows {
		s := row.Headline
		if len(t.CJK) > 0 {
			if marked := domain.MarkCJK(row.Text, t.CJK); marked != "" {
				s = marked
			}
		}
		byID[row.ID] = s
	}
	for i := range hits {
		hits[i].Snippet = byID[hits[i].Article.ID]
	}
	return nil
}

// customPlan runs each query with pgx's unnamed statement, which PostgreSQL plans for the
// parameters it is given, instead of the cached prepared statement that turns generic.
type customPlan struct{ db dao.DBTX }

func (c customPlan) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return c.db.Exec(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
}

func (c customPlan) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return c.db.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
}

func (c customPlan) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.db.QueryRow(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
}
