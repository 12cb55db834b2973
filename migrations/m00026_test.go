package migrations_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/migrations"
)

// Migration 00026 on a database the old lexicon pass was folding: the published articles past
// its watermark are logged as changes (once), those before it are left as folded, the watermark
// moves past every id so a pass of the previous version folds nothing twice, and from then on
// every change of a published article is logged; it rolls back.
func TestMigration00026_LogsTheUnfoldedTailAndRetiresTheWatermark(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDB(t)
	sqlDB, err := sql.Open("pgx", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.UpTo(ctx, 24); err != nil {
		t.Fatalf("migrate up to 24: %v", err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := db.Pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	exec(`INSERT INTO users (email, email_canonical, username, password_hash) VALUES ('a@example.com', 'a@example.com', 'author', 'h')`)
	exec(`INSERT INTO articles (slug, author_id, title, description, body, status)
		SELECT s, (SELECT id FROM users), s, 'd', 'b', CASE WHEN s LIKE '%draft' THEN 'draft' ELSE 'published' END
		FROM unnest(ARRAY['folded', 'tail-1', 'tail-draft', 'tail-2']) s`)
	exec(`UPDATE search_lexicon_state SET article_watermark = (SELECT id FROM articles WHERE slug = 'folded')`)

	if _, err := p.UpTo(ctx, 26); err != nil {
		t.Fatalf("migrate up to 26: %v", err)
	}
	if n := count(`SELECT count(*) FROM search_lexicon_changes c JOIN articles a ON a.id = c.article_id
		WHERE NOT c.removed AND a.slug IN ('tail-1', 'tail-2')`); n != 2 || count(`SELECT count(*) FROM search_lexicon_changes`) != 2 {
		t.Errorf("the unfolded tail's published articles logged %d times (of %d changes), want 2 and only them",
			n, count(`SELECT count(*) FROM search_lexicon_changes`))
	}
	if wm := count(`SELECT article_watermark FROM search_lexicon_state`); wm != 9223372036854775807 {
		t.Errorf("watermark %d after the migration, want the end of the id range", wm)
	}
	exec(`UPDATE articles SET status = 'withdrawn' WHERE slug = 'folded'`)
	if n := count(`SELECT count(*) FROM search_lexicon_changes c JOIN articles a ON a.id = c.article_id
		WHERE c.removed AND c.body = 'b' AND a.slug = 'folded'`); n != 1 {
		t.Errorf("a withdrawal logged %d removals of the folded text, want 1", n)
	}

	if _, err := p.DownTo(ctx, 24); err != nil {
		t.Fatalf("migrate down to 24: %v", err)
	}
	if wm, last := count(`SELECT article_watermark FROM search_lexicon_state`), count(`SELECT max(id) FROM articles`); wm != last {
		t.Errorf("watermark %d after the rollback, want the last article %d", wm, last)
	}
	exec(`UPDATE articles SET status = 'published' WHERE slug = 'folded'`) // no trigger, no table: no error
	if _, err := p.UpTo(ctx, 26); err != nil {
		t.Fatalf("migrate up to 26 again: %v", err)
	}
}
