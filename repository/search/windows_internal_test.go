package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/service"
)

// Every plan finds the same candidates: the newest domain.SearchDepth matches up to the snapshot,
// newest first, whether it walks windows of any size (all the way, or handing over to reading the
// rest of the history) or reads every match. The plan only changes what it costs.
func TestSearchPlans_FindTheSameCandidates(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	const articles = 5000
	last := seedPlanArticles(t, db, articles)
	r := NewRepository(Pool{Pool: db.Pool}, Replicas{}, dao.New(), "english", nil, nil, testenv.Logger(t))
	for _, words := range []string{"zqcommon", "zqhalf", "zqcommon zqhalf", "zqrare", "zqcommon -zqhalf", "zqrare or zqtitle"} {
		terms, err := domain.ParseSearchQuery(words)
		if err != nil {
			t.Fatal(err)
		}
		q := service.SearchQuery{Terms: terms}
		snapshot := last - 300 // the newest 300 articles came after the first page
		all, err := r.candidates(t.Context(), db.Pool, q, searchPlan{snapshotSeq: snapshot})
		if err != nil {
			t.Fatal(err)
		}
		want := ids(all)
		if len(want) == 0 || len(want) > domain.SearchDepth || !slices.IsSortedFunc(want, func(a, b int64) int { return int(b - a) }) {
			t.Fatalf("%q: reading every match gave %d candidates, want newest first, 1..%d", words, len(want), domain.SearchDepth)
		}
		for _, p := range []searchPlan{
			{shift: searchMinShift, top: int32(snapshot >> searchMinShift), bottom: 0},
			{shift: searchMinShift, top: int32(snapshot >> searchMinShift), bottom: int32(snapshot>>searchMinShift) - 1}, // hands over
			{shift: searchMinShift, top: int32(snapshot >> searchMinShift), bottom: int32(snapshot >> searchMinShift)},   // one window, then the rest
			{shift: searchMidShift, top: int32(snapshot >> searchMidShift), bottom: 0},
			{shift: searchMaxShift, top: int32(snapshot >> searchMaxShift), bottom: 0},
		} {
			p.snapshotSeq = snapshot
			got, err := r.candidates(t.Context(), db.Pool, q, p)
			if err != nil {
				t.Fatalf("%q, plan %+v: %v", words, p, err)
			}
			if !slices.Equal(ids(got), want) {
				t.Errorf("%q, plan %+v: %d candidates %v…, want %d %v…", words, p, len(got), head(ids(got)), len(want), head(want))
			}
			for i := range got {
				if got[i].rank != all[i].rank || got[i].counters != all[i].counters || got[i].article.Title != all[i].article.Title {
					t.Errorf("%q, plan %+v: candidate %d is %+v, want %+v", words, p, got[i].article.ID, got[i], all[i])
					break
				}
			}
		}
	}
}

// seedPlanArticles publishes n articles by one user, in publication order, with the made-up words
// the plan tests search for (zqcommon in all, zqhalf in every second, zqtitle in every seventh's
// title, zqrare in every 97th), likes on every third; it returns the last place.
func seedPlanArticles(t *testing.T, db *testenv.DB, n int) int64 {
	t.Helper()
	if _, err := db.Pool.Exec(t.Context(), fmt.Sprintf(`
		INSERT INTO users (email, username, password_hash) VALUES ('plans@example.com', 'plans', 'x');
		INSERT INTO articles (slug, author_id, title, description, body, status, published_at, search_vector, search_seq)
		SELECT 'plan-' || i, u.id, t.title, 'about it', t.body, 'published', now() - (%[1]d - i) * interval '1 minute',
		       inkwell_search_document('english', t.title, 'about it', t.body), nextval('articles_search_seq')
		FROM users u, generate_series(1, %[1]d) AS i,
		     LATERAL (SELECT CASE WHEN i %% 7 = 0 THEN 'zqtitle zqcommon' ELSE 'Plain title' END AS title,
		                     'zqcommon body' || CASE WHEN i %% 2 = 0 THEN ' zqhalf' ELSE '' END
		                                     || CASE WHEN i %% 97 = 0 THEN ' zqrare' ELSE '' END AS body) AS t
		ORDER BY i;
		INSERT INTO interactives (biz, biz_id, like_cnt) SELECT 'article', id, id %% 13 FROM articles WHERE id %% 3 = 0;`, n)); err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := db.Pool.QueryRow(t.Context(), `SELECT max(search_seq) FROM articles`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	return last
}

func ids(cs []searchCandidate) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.article.ID
	}
	return out
}

func head(s []int64) []int64 { return s[:min(len(s), 5)] }

// placesQuerier records the places the candidate statements were asked to read from.
type placesQuerier struct {
	dao.Querier
	mu       sync.Mutex
	tops     []int32 // window statements' first window
	belowSeq []int64 // ArticleSearchAll's bound
}

func (q *placesQuerier) ArticleSearchWindow10(ctx context.Context, db dao.DBTX, arg dao.ArticleSearchWindow10Params) ([]dao.ArticleSearchWindow10Row, error) {
	q.mu.Lock()
	q.tops = append(q.tops, arg.Top)
	q.mu.Unlock()
	return q.Querier.ArticleSearchWindow10(ctx, db, arg)
}

func (q *placesQuerier) ArticleSearchAll(ctx context.Context, db dao.DBTX, arg dao.ArticleSearchAllParams) ([]dao.ArticleSearchAllRow, error) {
	q.mu.Lock()
	q.belowSeq = append(q.belowSeq, arg.BelowSeq)
	q.mu.Unlock()
	return q.Querier.ArticleSearchAll(ctx, db, arg)
}

// A cursor naming a place past the last publication (forged: the API only hands out places it
// has seen) is held to the present: the search reads no window past it and answers what the
// honest cursor answers.
func TestSearch_ForgedCursorPlaceIsHeldToThePresent(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	last := seedPlanArticles(t, db, 5000)
	q := &placesQuerier{Querier: dao.New()}
	r := NewRepository(Pool{Pool: db.Pool}, Replicas{}, q, "english", nil, nil, testenv.Logger(t))
	// As common as the lexicon would say once its pass ran: the plan walks windows of 1,024.
	r.words.entries["zqcommon"] = cachedWord[wordEstimate]{wordEstimate{ndoc: 5000}, time.Now().Add(time.Hour)}
	terms, err := domain.ParseSearchQuery("zqcommon")
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.search(t.Context(), service.SearchQuery{Terms: terms, Limit: 20})
	if err != nil || first.Next == nil {
		t.Fatalf("first page: %+v, %v; want a page with a next cursor", first, err)
	}
	honest, err := r.search(t.Context(), service.SearchQuery{Terms: terms, Limit: 20, After: first.Next})
	if err != nil {
		t.Fatal(err)
	}
	// 1<<40 names window 1<<30 of 1,024 places (a walk of empty windows); 1<<50 names one past
	// int32, which would wrap to window 0 (the oldest places).
	for _, seq := range []int64{last + 1, 1 << 40, 1 << 50} {
		q.mu.Lock()
		q.tops, q.belowSeq = nil, nil
		q.mu.Unlock()
		forged := *first.Next
		forged.SnapshotSeq = seq
		got, err := r.search(t.Context(), service.SearchQuery{Terms: terms, Limit: 20, After: &forged})
		if err != nil {
			t.Fatalf("place %d: %v", seq, err)
		}
		if !slices.Equal(hitIDs(got.Hits), hitIDs(honest.Hits)) {
			t.Errorf("place %d: page %v, want the honest cursor's %v", seq, hitIDs(got.Hits), hitIDs(honest.Hits))
		}
		q.mu.Lock()
		if len(q.tops) == 0 {
			t.Errorf("place %d: no window was walked (plan changed?)", seq)
		}
		for _, top := range q.tops {
			if top > int32(last>>searchMinShift) {
				t.Errorf("place %d: walked from window %d, past the last place's window %d", seq, top, last>>searchMinShift)
			}
		}
		for _, below := range q.belowSeq {
			if below > last+1 {
				t.Errorf("place %d: read every match below %d, past the last place %d", seq, below, last)
			}
		}
		q.mu.Unlock()
	}
}

func hitIDs(hs []domain.SearchHit) []int64 {
	out := make([]int64, len(hs))
	for i, h := range hs {
		out[i] = h.Article.ID
	}
	return out
}

// lexemeQuerier counts the lookups of the lexemes of texts' words.
type lexemeQuerier struct {
	dao.Querier
	lookups, words atomic.Int64
}

func (q *lexemeQuerier) SearchWordsLexemes(ctx context.Context, db dao.DBTX, arg dao.SearchWordsLexemesParams) ([]dao.SearchWordsLexemesRow, error) {
	q.lookups.Add(1)
	q.words.Add(int64(len(arg.Words)))
	return q.Querier.SearchWordsLexemes(ctx, db, arg)
}

// Snippets look up only the words that could match (their first letter is a query lexeme's), once
// per instance: a second search of the same texts asks PostgreSQL nothing about words.
func TestSearchSnippets_LookUpFewWordsOnce(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	seedPlanArticles(t, db, 300)
	q := &lexemeQuerier{Querier: dao.New()}
	r := NewRepository(Pool{Pool: db.Pool}, Replicas{}, q, "english", nil, nil, testenv.Logger(t))
	terms, err := domain.ParseSearchQuery("zqhalf")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		page, err := r.search(t.Context(), service.SearchQuery{Terms: terms, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Hits) != 20 {
			t.Fatalf("search %d: %d hits, want 20", i, len(page.Hits))
		}
		for _, h := range page.Hits {
			if !strings.Contains(h.Snippet, "\x01zqhalf\x02") {
				t.Fatalf("search %d: snippet %q does not mark zqhalf", i, h.Snippet)
			}
		}
	}
	// The page's texts (description and body) hold about, it, zqcommon, body and zqhalf: of them
	// only zqcommon and zqhalf begin like the query's lexeme.
	if n, w := q.lookups.Load(), q.words.Load(); n != 1 || w != 2 {
		t.Fatalf("%d lexeme lookups of %d words over two searches, want 1 of 2 (zqcommon, zqhalf)", n, w)
	}
}
