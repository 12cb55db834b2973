package search_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// lexiconArticle inserts an article straight into the table (its triggers log the change the
// lexicon pass folds) and returns its id.
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

func TestSearchLexicon_PassAndSuggest(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New())
	author := lexiconAuthor(t, db.Pool)
	old := time.Now().Add(-time.Hour)
	lexiconArticle(t, db.Pool, author, "published", "Training your Dragon", "The dragon sleeps in the wagon; the cat and the cat's hat.", old)
	lexiconArticle(t, db.Pool, author, "published", "Cats", "A cat, 12345 cats, 缓存击穿 and いろは. Technology.", old)
	lexiconArticle(t, db.Pool, author, "draft", "Secret", "zanzibarian plans", old)
	lexiconArticle(t, db.Pool, author, "published", "Hats", "hat", old)

	pass, err := lex.Pass(ctx, search.LexiconPassOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !pass.Ran || pass.Changes != 3 || pass.Added != 3 || pass.Batches != 1 {
		t.Errorf("pass %+v: want it to run and count the 3 published articles in one batch", pass)
	}
	words := testenv.LexiconWords(t, db.Pool)
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
	again, err := lex.Pass(ctx, search.LexiconPassOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Changes != 0 || !maps.Equal(testenv.LexiconWords(t, db.Pool), words) {
		t.Errorf("second pass %+v changed the lexicon", again)
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
	if _, err := lex.Pass(ctx, search.LexiconPassOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := lex.Suggest(ctx, []string{"bat"}); err != nil || got["bat"] != "hat" {
		t.Errorf("Suggest(bat) = %v, %v; want hat (3 articles against cat's 2)", got, err)
	}
}

// requireLexiconExact folds every change and compares the lexicon with a recount.
func requireLexiconExact(t *testing.T, lex *search.Lexicon, pool *pgxpool.Pool, when string) map[string]int64 {
	t.Helper()
	if _, err := lex.Pass(context.Background(), search.LexiconPassOptions{Wait: true}); err != nil {
		t.Fatalf("%s: pass: %v", when, err)
	}
	got, want := testenv.LexiconWords(t, pool), testenv.LexiconRecount(t, pool)
	if !maps.Equal(got, want) {
		for w, n := range want {
			if got[w] != n {
				t.Errorf("%s: lexicon[%q] = %d, a recount finds %d", when, w, got[w], n)
			}
		}
		for w, n := range got {
			if _, ok := want[w]; !ok {
				t.Errorf("%s: lexicon holds %q (%d), no published article does", when, w, n)
			}
		}
	}
	return got
}

// The lexicon's counts follow every change of what is published: a withdrawal, a deletion and an
// edit take their words out (so they stop being suggested), a publish (also of an article the
// pass first saw as a draft) and a republish put them in; changes folded together cancel exactly.
func TestSearchLexicon_CountsFollowRemovals(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New())
	author := lexiconAuthor(t, db.Pool)
	old := time.Now().Add(-time.Hour)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	suggests := func(word, want string) {
		t.Helper()
		got, err := lex.Suggest(ctx, []string{word})
		if err != nil || got[word] != want {
			t.Errorf("Suggest(%s) = %q, %v; want %q", word, got[word], err, want)
		}
	}
	wagon := lexiconArticle(t, db.Pool, author, "published", "Wagons", "the dragon pulls a wagon", old)
	griffin := lexiconArticle(t, db.Pool, author, "published", "Dragons", "the dragon sleeps", old)
	draft := lexiconArticle(t, db.Pool, author, "draft", "Later", "a zeppelin", old)
	words := requireLexiconExact(t, lex, db.Pool, "published")
	if words["dragon"] != 2 || words["wagon"] != 1 {
		t.Fatalf("after publishing: %v", words)
	}
	suggests("wagn", "wagon")

	exec(`UPDATE articles SET status = 'withdrawn' WHERE id = $1`, wagon)
	words = requireLexiconExact(t, lex, db.Pool, "withdrawn")
	if _, ok := words["wagon"]; ok || words["dragon"] != 1 {
		t.Fatalf("after the withdrawal: %v; want no wagon and dragon in 1", words)
	}
	suggests("wagn", "") // a withdrawn article's word is no longer suggested

	exec(`UPDATE articles SET body = 'the griffin sleeps' WHERE id = $1`, griffin)
	words = requireLexiconExact(t, lex, db.Pool, "edited")
	if _, ok := words["dragon"]; ok || words["griffin"] != 1 {
		t.Fatalf("after the edit: %v; want griffin and no dragon", words)
	}
	suggests("dargon", "")

	exec(`UPDATE articles SET status = 'published', published_at = now() WHERE id = $1`, draft)
	if requireLexiconExact(t, lex, db.Pool, "a draft published after a pass saw it")["zeppelin"] != 1 {
		t.Fatal("the draft published later was never counted")
	}
	exec(`UPDATE articles SET status = 'published' WHERE id = $1`, wagon)
	requireLexiconExact(t, lex, db.Pool, "republished")

	// Several changes of one article between two passes fold to its last state: published, edited
	// twice, withdrawn, republished, all before the pass.
	churn := lexiconArticle(t, db.Pool, author, "published", "Churn", "alpha", old)
	exec(`UPDATE articles SET body = 'bravo' WHERE id = $1`, churn)
	exec(`UPDATE articles SET body = 'charlie' WHERE id = $1`, churn)
	exec(`UPDATE articles SET status = 'withdrawn' WHERE id = $1`, churn)
	exec(`UPDATE articles SET status = 'published', body = 'delta' WHERE id = $1`, churn)
	words = requireLexiconExact(t, lex, db.Pool, "churned")
	for _, w := range []string{"alpha", "bravo", "charlie"} {
		if _, ok := words[w]; ok {
			t.Errorf("after churn the lexicon holds %q", w)
		}
	}

	exec(`DELETE FROM articles WHERE id = ANY($1)`, []int64{griffin, churn})
	words = requireLexiconExact(t, lex, db.Pool, "deleted")
	if _, ok := words["griffin"]; ok {
		t.Errorf("a deleted article's word is still counted: %v", words)
	}
	// A change that leaves the words alone (the search backfill, a title-only change that keeps
	// its words) logs what it must and folds to nothing.
	exec(`UPDATE articles SET search_seq = NULL WHERE id = $1`, wagon)
	var logged int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM search_lexicon_changes`).Scan(&logged); err != nil || logged != 0 {
		t.Errorf("an update of neither text nor status logged %d changes (%v)", logged, err)
	}
}

// Writers change articles while passes run on another connection: whatever a pass's snapshot
// caught of a change in flight, once every change is folded the lexicon equals a recount.
func TestSearchLexicon_PassesRacingWriters(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New())
	author := lexiconAuthor(t, db.Pool)
	vocabulary := []string{"amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron"}
	var ids []int64
	for i := range 12 {
		ids = append(ids, lexiconArticle(t, db.Pool, author, "published", "Race", vocabulary[i%len(vocabulary)], time.Now()))
	}
	stop := make(chan struct{})
	passes := make(chan error, 1)
	go func() {
		defer close(passes)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := lex.Pass(ctx, search.LexiconPassOptions{Batch: 3, Wait: true}); err != nil {
				passes <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 60 {
				id := ids[(w*7+i)%len(ids)]
				word := vocabulary[(w+i*3)%len(vocabulary)]
				var err error
				switch i % 4 {
				case 0:
					_, err = db.Pool.Exec(ctx, `UPDATE articles SET body = $2 WHERE id = $1`, id, word+" "+vocabulary[i%len(vocabulary)])
				case 1:
					_, err = db.Pool.Exec(ctx, `UPDATE articles SET status = CASE status WHEN 'published' THEN 'withdrawn' ELSE 'published' END WHERE id = $1`, id)
				case 2:
					// an edit and a status change in one transaction
					err = pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
						if _, err := tx.Exec(ctx, `UPDATE articles SET title = $2 WHERE id = $1`, id, word); err != nil {
							return err
						}
						_, err := tx.Exec(ctx, `UPDATE articles SET status = 'published' WHERE id = $1`, id)
						return err
					})
				default:
					_, err = db.Pool.Exec(ctx, `UPDATE articles SET description = $2 WHERE id = $1`, id, word)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-passes; err != nil {
		t.Fatal(err)
	}
	requireLexiconExact(t, lex, db.Pool, "after racing writers")
}

// A pass works in bounded batches and skips when another pass holds the lock.
func TestSearchLexicon_PassIsBoundedAndSkipsWhenLocked(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New())
	author := lexiconAuthor(t, db.Pool)
	for i := range 7 {
		lexiconArticle(t, db.Pool, author, "published", fmt.Sprintf("word%c", 'a'+i), "common", time.Now())
	}
	p, err := lex.Pass(ctx, search.LexiconPassOptions{Batch: 2, MaxBatches: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Batches != 1 || p.Changes != 2 {
		t.Errorf("bounded pass %+v: want 1 batch of 2 changes", p)
	}
	if n := testenv.LexiconWords(t, db.Pool)["common"]; n != 2 {
		t.Errorf("common counted in %d articles, want 2", n)
	}

	// Another session holds the pass's lock: a pass skips, without touching anything.
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(1422, 1)"); err != nil {
		t.Fatal(err)
	}
	p, err = lex.Pass(ctx, search.LexiconPassOptions{})
	if err != nil || p.Ran {
		t.Errorf("pass while locked elsewhere: %+v, %v; want skipped", p, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock(1422, 1)"); err != nil {
		t.Fatal(err)
	}
	conn.Release()

	p, err = lex.Pass(ctx, search.LexiconPassOptions{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Ran || p.Changes != 5 || p.Batches != 3 {
		t.Errorf("final pass %+v: want the last 5 changes in 3 batches", p)
	}
	if n := testenv.LexiconWords(t, db.Pool)["common"]; n != 7 {
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

// The rebuild README documents for operators (truncate, log every published article as added, in
// one transaction under the pass's lock) is exact, also with a writer's change racing it: one
// that commits while the rebuild waits for its lock, and one that writes the article after the
// rebuild's truncate and before the rebuild reads the articles.
func TestSearchLexicon_DocumentedRebuild(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	lex := search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New())
	author := lexiconAuthor(t, db.Pool)
	kept := lexiconArticle(t, db.Pool, author, "published", "Kept", "kestrel", time.Now())
	other := lexiconArticle(t, db.Pool, author, "published", "Other", "osprey", time.Now())
	requireLexiconExact(t, lex, db.Pool, "before")
	// A word counted before the lexicon followed changes, never subtracted.
	if _, err := db.Pool.Exec(ctx, `INSERT INTO search_words (word, ndoc) VALUES ('stale', 3)`); err != nil {
		t.Fatal(err)
	}
	// waitBlocked returns once a session waits for a lock on the change log.
	waitBlocked := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var n int
			if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'search_lexicon_changes'::regclass`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never waited for the change log's lock", what)
			}
		}
	}

	// 1: a writer's edit is open (its change rows written) when the rebuild starts; the rebuild's
	// truncate waits for it, and then reads the article as the writer left it.
	writer, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = writer.Rollback(ctx) }()
	if _, err := writer.Exec(ctx, `UPDATE articles SET body = 'kite' WHERE id = $1`, kept); err != nil {
		t.Fatal(err)
	}
	rebuild, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rebuild.Rollback(ctx) }()
	if _, err := rebuild.Exec(ctx, `SELECT pg_advisory_xact_lock(1422, 1)`); err != nil {
		t.Fatal(err)
	}
	truncated := make(chan error, 1)
	go func() {
		_, err := rebuild.Exec(ctx, `TRUNCATE search_words, search_lexicon_changes`)
		truncated <- err
	}()
	waitBlocked("the rebuild's truncate")
	if err := writer.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-truncated; err != nil {
		t.Fatal(err)
	}

	// 2: a writer edits another article after the truncate; its change rows wait for the rebuild,
	// which reads the article's text from before the edit.
	edited := make(chan error, 1)
	go func() {
		_, err := db.Pool.Exec(ctx, `UPDATE articles SET body = 'owl' WHERE id = $1`, other)
		edited <- err
	}()
	waitBlocked("the second writer")
	if _, err := rebuild.Exec(ctx, `INSERT INTO search_lexicon_changes (article_id, removed)
		SELECT id, false FROM articles WHERE status = 'published' ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-edited; err != nil {
		t.Fatal(err)
	}
	words := requireLexiconExact(t, lex, db.Pool, "after the rebuild")
	if _, ok := words["stale"]; ok || words["kite"] != 1 || words["owl"] != 1 || words["osprey"] != 0 {
		t.Errorf("after the rebuild: %v; want kite and owl, no stale word and no osprey", words)
	}
}
