package seed_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cmd/inkwell/seed"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// Every seeded article is searchable: the seed fills the search documents after its COPY, in
// batches over several statements. An English article is found by its title's words (a title of stop
// words only finds nothing, by design); CJK ones count as found when they have a document (their
// bigrams are CJK search's own tests).
func TestSeeder_FillsSearchDocuments(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	opts := seed.Options{Users: 5, Articles: 25_000, Days: 3, PasswordHash: "x", Now: time.Now()}
	if err := seed.New(db.Pool, dao.New()).Seed(ctx, opts, func(string, int, int) {}); err != nil {
		t.Fatal(err)
	}
	var missing, found int64
	if err := db.Pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE search_vector IS NULL),
		       count(*) FILTER (WHERE length(search_vector) > 0 AND (title !~ '^[A-Z]'
		           OR numnode(plainto_tsquery('english', title)) = 0 OR search_vector @@ plainto_tsquery('english', title)))
		FROM articles`).Scan(&missing, &found); err != nil {
		t.Fatal(err)
	}
	if missing != 0 || found != int64(opts.Articles) {
		t.Fatalf("%d articles without a document, %d found; want 0 and %d", missing, found, opts.Articles)
	}
}

// A seed with NoSearch loads articles the search cannot see yet (no document, no place, nothing
// in the lexicon); the server's backfill then makes them searchable.
func TestSeeder_NoSearchLeavesItToTheBackfill(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	opts := seed.Options{Users: 2, Articles: 700, Days: 2, PasswordHash: "x", Now: time.Now(), NoSearch: true}
	if err := seed.New(db.Pool, dao.New()).Seed(ctx, opts, func(string, int, int) {}); err != nil {
		t.Fatal(err)
	}
	var unindexed, words int64
	count := func() {
		t.Helper()
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE search_vector IS NULL OR search_seq IS NULL),
			(SELECT count(*) FROM search_words) FROM articles`).Scan(&unindexed, &words); err != nil {
			t.Fatal(err)
		}
	}
	if count(); unindexed != 700 || words != 0 {
		t.Fatalf("after a seed without search: %d of 700 articles unindexed, %d lexicon words; want 700 and 0", unindexed, words)
	}
	if n, err := search.NewReindexer(db.Pool, dao.New(), "english", testenv.Logger(t)).BackfillSearch(ctx); err != nil || n != 700 {
		t.Fatalf("backfill indexed %d, %v; want 700", n, err)
	}
	if count(); unindexed != 0 {
		t.Fatalf("%d articles still unindexed after the backfill", unindexed)
	}
	// Their words reach the lexicon through the lexicon pass, as any published article's.
	if _, err := search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New()).Pass(ctx, search.LexiconPassOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := testenv.LexiconWords(t, db.Pool), testenv.LexiconRecount(t, db.Pool); len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("the lexicon after a pass holds %d words, a recount of the seeded articles %d", len(got), len(want))
	}
}
