package seed_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cmd/inkwell/seed"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// The reader a seed adds follows and favorites exactly what it was asked to, drawn from that
// seed's own authors and articles.
func TestSeeder_Reader(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	seeder := seed.New(db.Pool, dao.New())
	opts := seed.Options{Users: 30, Articles: 200, Days: 3, PasswordHash: "x", Chunk: 64, Now: time.Now(),
		Reader: seed.Reader{Username: "reader1", Follows: 25, Favorites: 40}}
	var steps []string
	if err := seeder.Seed(ctx, opts, func(what string, _, _ int) { steps = append(steps, what) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps[len(steps)-2:], []string{"reader", "analyze"}) {
		t.Errorf("progress steps %q: want the reader, then the analyze, last", steps)
	}
	var follows, selfOrForeign, favorites, notSeeded int
	if err := db.Pool.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE f.followee_id = r.id OR u.username NOT LIKE 'seed%')
		FROM users r JOIN follows f ON f.follower_id = r.id JOIN users u ON u.id = f.followee_id
		WHERE r.username = 'reader1'`).Scan(&follows, &selfOrForeign); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE a.slug NOT LIKE 'seed-%' OR a.status <> 'published')
		FROM users r JOIN likes l ON l.user_id = r.id AND l.biz = 'article' AND l.liked
		JOIN articles a ON a.id = l.biz_id WHERE r.username = 'reader1'`).Scan(&favorites, &notSeeded); err != nil {
		t.Fatal(err)
	}
	if follows != 25 || selfOrForeign != 0 || favorites != 40 || notSeeded != 0 {
		t.Errorf("reader: %d follows (%d not seeded authors), %d favorites (%d not seeded articles); want 25 and 40",
			follows, selfOrForeign, favorites, notSeeded)
	}

	// A second seed without a reader adds none; one asking for more follows than authors fails.
	opts.Reader = seed.Reader{}
	opts.Now = opts.Now.Add(time.Second)
	if err := seeder.Seed(ctx, opts, func(string, int, int) {}); err != nil {
		t.Fatal(err)
	}
	opts.Reader = seed.Reader{Username: "reader2", Follows: 31}
	opts.Now = opts.Now.Add(time.Second)
	if err := seeder.Seed(ctx, opts, func(string, int, int) {}); err == nil {
		t.Error("31 follows of 30 authors: nil error")
	}
	var readers int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM users WHERE username LIKE 'reader%'").Scan(&readers); err != nil {
		t.Fatal(err)
	}
	if readers != 1 {
		t.Errorf("%d readers, want 1", readers)
	}
}

// Seeded text is searchable text: English with a Zipf skew, some CJK bodies, and every seeded
// article folded into the lexicon by the end of the seed.
func TestSeeder_TextAndLexicon(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	opts := seed.Options{Users: 5, Articles: 600, Days: 2, PasswordHash: "x", Chunk: 250, Now: time.Now()}
	if err := seed.New(db.Pool, dao.New()).Seed(ctx, opts, func(string, int, int) {}); err != nil {
		t.Fatal(err)
	}
	var cjk, english, changes, theDocs, words int64
	if err := db.Pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE body ~ '[\u4e00-\u9fff\u3040-\u30ff]'), count(*) FILTER (WHERE body ~ '^[A-Z]'),
		       (SELECT count(*) FROM search_lexicon_changes), (SELECT ndoc FROM search_words WHERE word = 'the'),
		       (SELECT count(*) FROM search_words)
		FROM articles`).Scan(&cjk, &english, &changes, &theDocs, &words); err != nil {
		t.Fatal(err)
	}
	if cjk < 10 || cjk > 60 || cjk+english != 600 {
		t.Errorf("%d CJK and %d English bodies of 600, want about 5%% CJK", cjk, english)
	}
	// Counted by the seed, so no change rows are left for the pass (which would count them twice).
	if changes != 0 || theDocs < english*9/10 || theDocs > english || words < 1000 {
		t.Errorf("lexicon after the seed: %d change rows left, 'the' in %d articles (%d English), %d words",
			changes, theDocs, english, words)
	}
	// The seed counts the words it writes instead of folding them from the database: the counts
	// must be what the lexicon pass's own statement would have found.
	var differ int64
	if err := db.Pool.QueryRow(ctx, `
		WITH folded AS (
		    SELECT w.word, w.ndoc
		    FROM ts_stat($q$SELECT to_tsvector('simple', left(title, 1000) || ' ' || left(description, 4000) || ' ' || left(body, 100000))
		                   FROM articles WHERE status = 'published'$q$) AS w (word, ndoc, nentry)
		    WHERE w.word ~ '^[[:alnum:]]{3,32}$' AND w.word !~ '^[0-9]+$'
		      AND w.word !~ '[぀-ヿ㐀-䶿一-鿿가-힯豈-﫿]')
		SELECT count(*) FROM folded f FULL JOIN search_words s ON s.word = f.word
		WHERE f.ndoc IS DISTINCT FROM s.ndoc`).Scan(&differ); err != nil {
		t.Fatal(err)
	}
	if differ != 0 {
		t.Errorf("%d lexicon words differ from what the lexicon pass folds from the seeded articles", differ)
	}
	// Seeded articles take their places in publication order.
	var disorder int64
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM (
		SELECT published_at < lag(published_at) OVER (ORDER BY search_seq) AS back FROM articles) s WHERE back`).Scan(&disorder); err != nil {
		t.Fatal(err)
	}
	if disorder != 0 {
		t.Errorf("%d seeded articles were placed before an article published after them", disorder)
	}
}
