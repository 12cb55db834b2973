package search

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Repository runs article searches: the ranking query, then the snippets of the page, and for
// anonymous readers a short-lived cache of hit lists hydrated through the article cache.
type Repository struct {
	pool     *pgxpool.Pool
	replicas Replicas
	q        dao.Querier
	lang     Language
	articles ArticleReader
	words    *searchWordCache[wordEstimate] // how common query words are, and their lexemes
	lexemes  *searchWordCache[string]       // the lexemes of the words of hits' texts
	hits     *cache.SearchCache
	log      *slog.Logger
}

// ArticleReader reads full articles by slug through the article cache (the core
// repository.ArticleRepository): cached hit lists are hydrated with it, so a page stays coherent
// with every write. Declared here so the search room does not import the core repository.
type ArticleReader interface {
	GetBySlugs(ctx context.Context, slugs []string) (map[string]domain.Article, error)
}

// NewRepository returns the repository.
func NewRepository(pool Pool, replicas Replicas, q dao.Querier, lang Language, articles ArticleReader, hits *cache.SearchCache, log *slog.Logger) *Repository {
	return &Repository{pool: pool.Pool, replicas: replicas, q: q, lang: lang, articles: articles, words: newSearchWordCache[wordEstimate](), lexemes: newSearchWordCache[string](), hits: hits, log: log}
}

// Search returns one page of hits. A shared (anonymous) page comes from the hit-list cache when
// it is there; its articles are then read through the article cache, and any that is no longer
// published is left out. Redis failing only means PostgreSQL answers.
func (r *Repository) Search(ctx context.Context, q service.SearchQuery) (service.SearchPage, error) {
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
		fmt.Fprintf(&b, "\x00%d\x00%d\x00%s\x00%d\x00%d", c.Snapshot.UnixMicro(), c.SnapshotSeq, strconv.FormatFloat(c.Score, 'g', -1, 64), c.ID, c.Total)
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
func (r *Repository) hydrate(ctx context.Context, e cache.SearchEntry) (service.SearchPage, error) {
	slugs := make([]string, len(e.Hits))
	for i, h := range e.Hits {
		slugs[i] = h.Slug
	}
	arts, err := r.articles.GetBySlugs(ctx, slugs)
	if err != nil {
		return service.SearchPage{}, err
	}
	page := service.SearchPage{Hits: make([]domain.SearchHit, 0, len(e.Hits)), Total: e.Total, Next: e.Next}
	for _, h := range e.Hits {
		a, ok := arts[h.Slug]
		if !ok || a.ID != h.ID || !a.Public() {
			continue
		}
		a.Body = "" // a list carries summaries
		page.Hits = append(page.Hits, domain.SearchHit{Article: a, Score: h.Score, Snippet: h.Snippet})
	}
	return page, nil
}

// firstSearchPage is the position before every hit.
var firstSearchPage = domain.SearchCursor{Score: math.Inf(1), ID: math.MaxInt64}

// searchCandidate is one of a search's candidates: a match (as a list shows it) with its text
// rank, its counters (the likes weigh in the score) and its score.
type searchCandidate struct {
	article  domain.Article
	rank     float64
	counters domain.Counters
	score    float64
}

// candidateOf turns a candidate row into a candidate; the four candidate statements return the
// same columns, so their rows convert to this one's type.
func candidateOf(row dao.ArticleSearchAllRow) searchCandidate {
	counters := domain.Counters{Reads: row.Reads, Likes: row.Likes, Collects: row.Collects}
	a := domain.Article{ // a list's summary: no body
		ID: row.ID, Slug: row.Slug, AuthorID: row.AuthorID, Title: row.Title, Description: row.Description,
		Tags: row.TagList, Status: domain.StatusPublished, Version: row.Version,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	if a.Tags == nil {
		a.Tags = []string{}
	}
	if row.PublishedAt.Valid {
		t := row.PublishedAt.Time
		a.PublishedAt = &t
	}
	return searchCandidate{rank: row.Rank, counters: counters, article: a}
}

// optText and optInt are an optional filter's parameter: NULL when it is not set.
func optText(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

func optInt(id int64) pgtype.Int8 { return pgtype.Int8{Int64: id, Valid: id != 0} }

// search ranks the newest domain.SearchDepth matches (candidates; see planSearch for how they are
// found) by domain.SearchScore, their likes read with them from interactives, and returns the page
// after q.After with its snippets, computed for the page only.
func (r *Repository) search(ctx context.Context, q service.SearchQuery) (service.SearchPage, error) {
	db := r.reader(ctx) // one server for the search's statements, so they see one state
	stats, err := r.q.ArticleSearchSnapshot(ctx, db, dao.ArticleSearchSnapshotParams{Tag: optText(q.Tag), AuthorID: optInt(q.AuthorID)})
	if err != nil {
		return service.SearchPage{}, pg.Wrapf(err, "plan a search")
	}
	known, err := r.words.get(ctx, searchPlanWords(q.Terms.Words), r.estimateWords)
	if err != nil {
		return service.SearchPage{}, err
	}
	after := firstSearchPage
	if q.After != nil { // a later page ranks the first page's candidates, at its snapshot
		after = *q.After
		// A cursor names a past snapshot: one naming a later place (forged) would only make the
		// windows walk empty places, so it is held to the present.
		stats.SnapshotSeq = min(q.After.SnapshotSeq, stats.SnapshotSeq)
		stats.SnapshotAt = q.After.Snapshot
	}
	plan := planSearch(q.Terms.Words, len(q.Terms.CJK), stats, known, q.Tag != "", q.AuthorID != 0, domain.SearchDepth)
	cands, err := r.candidates(ctx, db, q, plan)
	if err != nil {
		return service.SearchPage{}, err
	}
	page := service.SearchPage{Total: int64(len(cands)), Counters: map[int64]domain.Counters{}}
	if q.After != nil {
		page.Total = q.After.Total // the first page's count, whatever page this is
	}
	if len(cands) == 0 {
		return page, nil
	}
	score(cands, stats.SnapshotAt)
	for _, c := range cands {
		if c.score < after.Score || (c.score == after.Score && c.article.ID < after.ID) {
			page.Hits = append(page.Hits, domain.SearchHit{Article: c.article, Score: c.score})
			page.Counters[c.article.ID] = c.counters
			if len(page.Hits) == q.Limit {
				break
			}
		}
	}
	if len(page.Hits) == 0 {
		return page, nil
	}
	if last := page.Hits[len(page.Hits)-1]; len(page.Hits) == q.Limit && last.Article.ID != cands[len(cands)-1].article.ID {
		page.Next = &domain.SearchCursor{Snapshot: stats.SnapshotAt, SnapshotSeq: stats.SnapshotSeq,
			Score: last.Score, ID: last.Article.ID, Total: page.Total}
	}
	ids := make([]int64, len(page.Hits))
	for i, h := range page.Hits {
		ids[i] = h.Article.ID
	}
	if err := r.snippets(ctx, db, q.Terms, known, ids, page.Hits); err != nil {
		return service.SearchPage{}, err
	}
	return page, nil
}

// estimateWords asks the lexicon how common words are (searchWordCache's loader).
func (r *Repository) estimateWords(ctx context.Context, words []string) (map[string]wordEstimate, error) {
	rows, err := r.q.SearchWordsEstimate(ctx, r.reader(ctx), dao.SearchWordsEstimateParams{Words: words, SearchConfig: string(r.lang)})
	if err != nil {
		return nil, pg.Wrapf(err, "estimate search words")
	}
	out := make(map[string]wordEstimate, len(rows))
	for _, row := range rows {
		out[row.Word] = wordEstimate{stop: row.Lexeme == "", ndoc: row.Ndoc, lexeme: row.Lexeme}
	}
	return out, nil
}

// candidates collects the newest domain.SearchDepth matches as the plan says: windows newest
// first, handing over to reading the rest of the history when the windows it walked ran out.
func (r *Repository) candidates(ctx context.Context, db dao.DBTX, q service.SearchQuery, p searchPlan) ([]searchCandidate, error) {
	var out []searchCandidate
	below := p.snapshotSeq + 1
	if p.shift != 0 {
		rows, err := r.walkWindows(ctx, db, q, p)
		if err != nil {
			return nil, pg.Wrapf(err, "search windows")
		}
		out = rows
		if len(out) == domain.SearchDepth || p.bottom == 0 {
			return out, nil
		}
		below = int64(p.bottom) << p.shift
	}
	rows, err := r.q.ArticleSearchAll(ctx, db, dao.ArticleSearchAllParams{
		SearchConfig: string(r.lang), Words: q.Terms.Words, Cjk: q.Terms.CJKQuery(), BelowSeq: below,
		Tag: optText(q.Tag), AuthorID: optInt(q.AuthorID), Depth: int32(domain.SearchDepth - len(out)),
	})
	if err != nil {
		return nil, pg.Wrapf(err, "search articles")
	}
	rest, _ := candidatesOf(rows, nil)
	return append(out, rest...), nil
}

// walkWindows runs the plan's window statement (one per window size: the index expression is part
// of the statement).
func (r *Repository) walkWindows(ctx context.Context, db dao.DBTX, q service.SearchQuery, p searchPlan) ([]searchCandidate, error) {
	cfg, words, cjk, tag, author := string(r.lang), q.Terms.Words, q.Terms.CJKQuery(), optText(q.Tag), optInt(q.AuthorID)
	depth := int32(domain.SearchDepth)
	switch p.shift {
	case searchMinShift:
		return candidatesOf(r.q.ArticleSearchWindow10(ctx, db, dao.ArticleSearchWindow10Params{Top: p.top, Bottom: p.bottom,
			SnapshotSeq: p.snapshotSeq, Tag: tag, AuthorID: author, Depth: depth, SearchConfig: cfg, Words: words, Cjk: cjk}))
	case searchMidShift:
		return candidatesOf(r.q.ArticleSearchWindow13(ctx, db, dao.ArticleSearchWindow13Params{Top: p.top, Bottom: p.bottom,
			SnapshotSeq: p.snapshotSeq, Tag: tag, AuthorID: author, Depth: depth, SearchConfig: cfg, Words: words, Cjk: cjk}))
	default:
		return candidatesOf(r.q.ArticleSearchWindow16(ctx, db, dao.ArticleSearchWindow16Params{Top: p.top, Bottom: p.bottom,
			SnapshotSeq: p.snapshotSeq, Tag: tag, AuthorID: author, Depth: depth, SearchConfig: cfg, Words: words, Cjk: cjk}))
	}
}

// candidatesOf turns the rows of any candidate statement into candidates (they return the same
// columns).
func candidatesOf[R dao.ArticleSearchWindow10Row | dao.ArticleSearchWindow13Row | dao.ArticleSearchWindow16Row | dao.ArticleSearchAllRow](rows []R, err error) ([]searchCandidate, error) {
	out := make([]searchCandidate, len(rows))
	for i, row := range rows {
		out[i] = candidateOf(dao.ArticleSearchAllRow(row))
	}
	return out, err
}

// score computes every candidate's score and orders them best first, ties by id, newest first.
func score(cands []searchCandidate, at time.Time) {
	for i := range cands {
		c := &cands[i]
		c.score = domain.SearchScore(c.rank, c.counters.Likes, at.Sub(*c.article.PublishedAt))
	}
	slices.SortFunc(cands, func(a, b searchCandidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(b.article.ID, a.article.ID)
	})
}

// snippets fills in the hits' snippets: the page's texts in one query, the words marked in Go.
// A word of a text is marked when its lexeme (PostgreSQL's, in the configured language) is one
// of the query's: what the index matched, without PostgreSQL parsing each text again (which
// ts_headline did, about 100 µs an article). Only the words that could match are looked up
// (their first letter is a query lexeme's: stemmers change endings), and the lexemes of words
// are cached like the estimates. A query with CJK runs marks them (domain.MarkCJK) when they
// occur in the text.
func (r *Repository) snippets(ctx context.Context, db dao.DBTX, t domain.SearchTerms, known map[string]wordEstimate, ids []int64, hits []domain.SearchHit) error {
	rows, err := r.q.ArticleSearchTexts(ctx, db, ids)
	if err != nil {
		return pg.Wrapf(err, "search snippets")
	}
	wanted := queryLexemes(t.Words, known)
	firsts := map[rune]bool{}
	for l := range wanted {
		first, _ := utf8.DecodeRuneInString(l)
		firsts[first] = true
	}
	// candidate is w lower-cased when it could match: its first letter is a query lexeme's.
	candidate := func(w string) (string, bool) {
		first, _ := utf8.DecodeRuneInString(w)
		if !firsts[unicode.ToLower(first)] {
			return "", false
		}
		return strings.ToLower(w), true
	}
	texts := make(map[int64]string, len(rows))
	seen := map[string]bool{}
	var lookup []string
	for _, row := range rows {
		text := domain.SnippetText(row.Description, row.Body)
		texts[row.ID] = text
		if len(wanted) == 0 {
			continue
		}
		for w := range domain.SnippetWords(text) {
			if w, ok := candidate(w); ok && !seen[w] {
				seen[w] = true
				lookup = append(lookup, w)
			}
		}
	}
	lexemes, err := r.lexemes.get(ctx, lookup, r.lexemesOf)
	if err != nil {
		return err
	}
	match := func(w string) bool {
		w, ok := candidate(w)
		if !ok {
			return false
		}
		l, ok := lexemes[w]
		return ok && wanted[l]
	}
	for i := range hits {
		text, ok := texts[hits[i].Article.ID]
		if !ok {
			continue
		}
		if len(t.CJK) > 0 {
			if marked := domain.MarkCJK(text, t.CJK); marked != "" {
				hits[i].Snippet = marked
				continue
			}
		}
		hits[i].Snippet = domain.Snippet(text, match)
	}
	return nil
}

// queryLexemes are the lexemes of the words a query looks for: not excluded ones, not stop words
// nor the "or" operator.
func queryLexemes(words string, known map[string]wordEstimate) map[string]bool {
	out := map[string]bool{}
	for _, tok := range searchWordTokens(words) {
		if e := known[tok.word]; !tok.negated && tok.word != "or" && e.lexeme != "" {
			out[e.lexeme] = true
		}
	}
	return out
}

// lexemesOf asks PostgreSQL for the lexemes of words (the lexeme cache's loader).
func (r *Repository) lexemesOf(ctx context.Context, words []string) (map[string]string, error) {
	rows, err := r.q.SearchWordsLexemes(ctx, r.reader(ctx), dao.SearchWordsLexemesParams{Words: words, SearchConfig: string(r.lang)})
	if err != nil {
		return nil, pg.Wrapf(err, "look up the lexemes of words")
	}
	out := make(map[string]string, len(rows))
	for _, row := range rows {
		out[row.Word] = row.Lexeme
	}
	return out, nil
}

// reader is the connection a search statement runs on.
func (r *Repository) reader(ctx context.Context) dao.DBTX {
	if r.replicas.Lane == nil {
		return r.pool
	}
	return r.replicas.For(ctx)
}
