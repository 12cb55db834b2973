package repository

import (
	"fmt"
	"slices"
	"testing"

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
		INSERT INTO interactives (biz, biz_id, like_cnt) SELECT 'article', id, id %% 13 FROM articles WHERE id %% 3 = 0;`, articles)); err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := db.Pool.QueryRow(t.Context(), `SELECT max(search_seq) FROM articles`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	r := NewSearchRepository(db.Pool, dao.New(), "english", nil, nil, testenv.Logger(t))
	for _, words := range []string{"zqcommon", "zqhalf", "zqcommon zqhalf", "zqrare", "zqcommon -zqhalf", "zqrare or zqtitle"} {
		terms, err := domain.ParseSearchQuery(words)
		if err != nil {
			t.Fatal(err)
		}
		q := service.SearchQuery{Terms: terms}
		snapshot := last - 300 // the newest 300 articles came after the first page
		all, err := r.candidates(t.Context(), q, searchPlan{snapshotSeq: snapshot})
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
			got, err := r.candidates(t.Context(), q, p)
			if err != nil {
				t.Fatalf("%q, plan %+v: %v", words, p, err)
			}
			if !slices.Equal(ids(got), want) {
				t.Errorf("%q, plan %+v: %d candidates %v…, want %d %v…", words, p, len(got), head(ids(got)), len(want), head(want))
			}
			for i := range got {
				if got[i].rank != all[i].rank || got[i].likes != all[i].likes || got[i].article.Title != all[i].article.Title {
					t.Errorf("%q, plan %+v: candidate %d is %+v, want %+v", words, p, got[i].article.ID, got[i], all[i])
					break
				}
			}
		}
	}
}

func ids(cs []searchCandidate) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.article.ID
	}
	return out
}

func head(s []int64) []int64 { return s[:min(len(s), 5)] }
