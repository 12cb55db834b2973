package repository_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// lexiconArticle inserts an article straight into the table (the lexicon pass reads only the
// table) and returns its id.
func lexiconArticle(t *testing.T, pool *pgxpool.Pool, author int64, status, title, body string, createdAt time.Time) int64 {
	t.Helper()
	var id int64
	if err := pool.QueryRow(context.Background(), `
		INSERT INTO articles (slug, author_id, title, description, body, status, created_at, published_at)
		VALUES ($1, $2, $3, '', $4, $5::text, $6::timestamptz, CASE WHEN $5::text = 'published' THEN $6::timestamptz END) RETURNING id`,
		testenv.RandomID(12), author, title, body, status, createdAt).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func lexiconAuthor(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var id int64
	name := "lex" + testenv.RandomID(8)
	if err := pool.QueryRow(context.Background(), `INSERT INTO users (email, email_canonical, username, password_hash)
		VALUES ($1, $1, $2, 'x') RETURNING id`, name+"@example.com", name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func lexiconWords(t *testing.T, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT word, ndoc FROM search_words")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var w string
		var n int64
		if err := rows.Scan(&w, &n); err != nil {
			t.Fatal(err)
		}
		out[w] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSearchLexicon_PassAndSuggest(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := repository.NewSearchLexicon(db.Pool, dao.New())
	author := lexiconAuthor(t, db.Pool)
	old := time.Now().Add(-time.Hour)
	lexiconArticle(t, db.Pool, author, "published", "Training your Dragon", "The dragon sleeps in the wagon; the cat and the cat's hat.", old)
	lexiconArticle(t, db.Pool, author, "published", "Cats", "A cat, 12345 cats, 缓存击穿 and いろは. Technology.", old)
	lexiconArticle(t, db.Pool, author, "draft", "Secret", "zanzibarian plans", old)
	lexiconArticle(t, db.Pool, author, "published", "Hats", "hat", old)

	settled := time.Now().Add(time.Minute)
	pass, err := lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: settled})
	if err != nil {
		t.Fatal(err)
	}
	if !pass.Ran || pass.Articles != 4 || pass.Batches != 1 {
		t.Errorf("pass %+v: want it to run and look at the 4 articles in one batch", pass)
	}
	words := lexiconWords(t, db.Pool)
	want := map[string]int64{"dragon": 1, "cat": 2, "hat": 2, "the": 1, "technology": 1, "wagon": 1, "cats": 1, "training": 1}
	for w, n := range want {
		if words[w] != n {
			t.Errorf("lexicon[%q] = %d, want %d", w, words[w], n)
		}
	}
	for _, w := range []string{"zanzibarian", "plans", "secret", "12345", "缓存击穿", "いろは", "in", "a"} {
		if _, ok := words[w]; ok {
			t.Errorf("lexicon holds %q (a draft's word, digits only, CJK or under 3 letters)", w)
		}
	}

	// Idempotent: a second pass finds nothing new and changes no count.
	again, err := lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: settled})
	if err != nil {
		t.Fatal(err)
	}
	if again.Articles != 0 || again.Watermark != pass.Watermark || !maps.Equal(lexiconWords(t, db.Pool), words) {
		t.Errorf("second pass %+v changed the lexicon or the watermark (was %d)", again, pass.Watermark)
	}

	got, err := lex.Suggest(ctx, []string{"Dargon", "dragon", "teh", "tehcnology", "bat", "xyzzyq", "12345", "缓存", "a", "wagn"}) //nolint:misspell // typos are the input
	if err != nil {
		t.Fatal(err)
	}
	// cat and hat are both one edit from bat: cat is in as many articles (2) as hat, so byte order
	// decides; wagn is one insertion from wagon.
	wantSug := map[string]string{"Dargon": "dragon", "teh": "the", "tehcnology": "technology", "bat": "cat", "wagn": "wagon"} //nolint:misspell // typos are the input
	if !maps.Equal(got, wantSug) {
		t.Errorf("Suggest = %v, want %v", got, wantSug)
	}

	// More articles with hat: now hat is in more articles than cat and wins the tie.
	lexiconArticle(t, db.Pool, author, "published", "More hats", "hat", old)
	if _, err := lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: settled}); err != nil {
		t.Fatal(err)
	}
	if got, err := lex.Suggest(ctx, []string{"bat"}); err != nil || got["bat"] != "hat" {
		t.Errorf("Suggest(bat) = %v, %v; want hat (3 articles against cat's 2)", got, err)
	}
}

// A pass works in bounded batches, stops at an article that is not settled yet (and so at every
// later one), and skips when another pass holds the lock.
func TestSearchLexicon_PassIsBoundedAndWaitsForRecentArticles(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := repository.NewSearchLexicon(db.Pool, dao.New())
	author := lexiconAuthor(t, db.Pool)
	base := time.Now().Add(-time.Hour)
	var ids []int64
	for i := range 7 {
		ids = append(ids, lexiconArticle(t, db.Pool, author, "published", fmt.Sprintf("word%c", 'a'+i), "common", base.Add(time.Duration(i)*time.Minute)))
	}
	// Article 6 (index 5) is recent at the settle time; 7 is old again (a transaction that began
	// long ago), but comes after it in id order.
	if _, err := db.Pool.Exec(ctx, "UPDATE articles SET created_at = now() WHERE id = $1", ids[5]); err != nil {
		t.Fatal(err)
	}
	settled := time.Now().Add(-time.Minute)

	p, err := lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: settled, Batch: 2, MaxBatches: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Batches != 1 || p.Articles != 2 || p.Watermark != ids[1] {
		t.Errorf("bounded pass %+v: want 1 batch of 2 articles, watermark %d", p, ids[1])
	}
	p, err = lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: settled, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.Articles != 3 || p.Watermark != ids[4] {
		t.Errorf("pass %+v: want 3 more articles, stopping before the recent one (watermark %d)", p, ids[4])
	}
	if n := lexiconWords(t, db.Pool)["common"]; n != 5 {
		t.Errorf("common counted in %d articles, want 5", n)
	}

	// Another session holds the pass's lock: a pass skips, without touching anything.
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(1422, 1)"); err != nil {
		t.Fatal(err)
	}
	p, err = lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: time.Now().Add(time.Minute)})
	if err != nil || p.Ran {
		t.Errorf("pass while locked elsewhere: %+v, %v; want skipped", p, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock(1422, 1)"); err != nil {
		t.Fatal(err)
	}
	conn.Release()

	// Once settled, the rest is folded; the lock went back with the connection each time.
	p, err = lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: time.Now().Add(time.Minute), Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Ran || p.Articles != 2 || p.Watermark != ids[6] {
		t.Errorf("final pass %+v: want the last 2 articles, watermark %d", p, ids[6])
	}
	if n := lexiconWords(t, db.Pool)["common"]; n != 7 {
		t.Errorf("common counted in %d articles, want 7", n)
	}
	var locks int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1422 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())").Scan(&locks); err != nil {
		t.Fatal(err)
	}
	if locks != 0 {
		t.Errorf("%d lexicon advisory locks still held after the passes", locks)
	}
}

// A seed's range is folded side by side, after the articles before it and before those after it,
// each once; an unsettled article before the range leaves it to ordinary passes.
func TestSearchLexicon_FoldRange(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := repository.NewSearchLexicon(db.Pool, dao.New())
	author := lexiconAuthor(t, db.Pool)
	old := time.Now().Add(-time.Hour)
	add := func(n int, createdAt time.Time) (first, last int64) {
		t.Helper()
		if err := db.Pool.QueryRow(ctx, `
			WITH a AS (
				INSERT INTO articles (slug, author_id, title, description, body, status, created_at, published_at)
				SELECT 'range-' || md5(random()::text || i), $1, 'Range', '', 'marker', 'published', $3, $3
				FROM generate_series(1, $2::int) i RETURNING id
			) SELECT min(id), max(id) FROM a`, author, n, createdAt).Scan(&first, &last); err != nil {
			t.Fatal(err)
		}
		return first, last
	}
	ndoc := func() int64 { return lexiconWords(t, db.Pool)["marker"] }

	// A seed into an empty database: its range starts at the first id, and is folded side by
	// side (not by the one-batch-at-a-time pass: an Until of 0 would have meant no bound).
	lo, hi := add(6_000, old)
	p, err := lex.FoldRange(ctx, lo, hi, time.Now(), 2)
	if err != nil || p.Ranges != 2 || p.Watermark != hi || ndoc() != 6_000 {
		t.Fatalf("FoldRange from the first id: %+v, %v, marker in %d; want 2 range statements, watermark %d", p, err, ndoc(), hi)
	}

	add(3, old)               // the app's, not folded yet
	lo, hi = add(12_000, old) // the seed's: three ranges of 5,000
	_, last := add(2, old)    // after the seed
	p, err = lex.FoldRange(ctx, lo, hi, time.Now(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if p.Watermark != last || p.Articles != 12_005 || p.Ranges != 3 || ndoc() != 18_005 {
		t.Errorf("FoldRange %+v, marker in %d articles; want 12,005 articles folded once (3 ranges), watermark %d", p, ndoc(), last)
	}

	// An article before the next range is not settled: ordinary batches stop before it.
	recentID, _ := add(1, time.Now())
	lo, hi = add(10, old)
	p, err = lex.FoldRange(ctx, lo, hi, time.Now().Add(-time.Minute), 3)
	if err != nil {
		t.Fatal(err)
	}
	if p.Watermark != last || ndoc() != 18_005 {
		t.Errorf("FoldRange past an unsettled article: %+v, marker in %d; want the watermark left at %d", p, ndoc(), last)
	}
	if p, err = lex.Pass(ctx, repository.LexiconPassOptions{SettledBefore: time.Now().Add(time.Minute)}); err != nil || p.Watermark != hi || ndoc() != 18_016 {
		t.Errorf("pass once settled (%d): %+v, %v, marker in %d; want the watermark at %d, 18,016 articles", recentID, p, err, ndoc(), hi)
	}
}
