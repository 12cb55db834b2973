package migrations_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/migrations"
)

// Migration 00018 on a database with data: stored registrations (which held raw tokens) are
// forgotten and other stored answers kept; an article whose followers were already notified counts
// as announced, one never announced does not; and it rolls back.
func TestMigration00018_ForgetsStoredTokensAndMarksAnnouncedArticles(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 17); err != nil {
		t.Fatalf("migrate up to 17: %v", err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.Pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	exec(`INSERT INTO users (email, username, password_hash) VALUES ('a@example.com', 'author', 'h'), ('r@example.com', 'reader', 'h')`)
	exec(`INSERT INTO articles (slug, author_id, title, description, body)
		SELECT s, (SELECT id FROM users WHERE username = 'author'), s, 'd', 'b' FROM unnest(ARRAY['announced', 'quiet']) s`)
	exec(`INSERT INTO notifications (user_id, kind, actor_id, article_id, event_id)
		SELECT (SELECT id FROM users WHERE username = 'reader'), 'article.published', author_id, id, 'ev-1'
		FROM articles WHERE slug = 'announced'`)
	exec(`INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body) VALUES
		('ip:192.0.2.1', 'signup', 'h', 201, '{"user":{"token":"raw-access","refreshToken":"raw-refresh"}}'),
		('user:1', 'post', 'h', 201, '{"article":{}}')`)

	if _, err := p.UpTo(ctx, 18); err != nil {
		t.Fatalf("migrate up to 18: %v", err)
	}
	if n := count(`SELECT count(*) FROM idempotency_keys WHERE scope LIKE 'ip:%'`); n != 0 {
		t.Errorf("%d stored registrations kept, want 0", n)
	}
	if n := count(`SELECT count(*) FROM idempotency_keys WHERE scope = 'user:1'`); n != 1 {
		t.Errorf("%d other stored answers kept, want 1", n)
	}
	if n := count(`SELECT count(*) FROM article_fanouts f JOIN articles a ON a.id = f.article_id WHERE a.slug = 'announced'`); n != 1 {
		t.Errorf("the announced article is not marked announced")
	}
	if n := count(`SELECT count(*) FROM article_fanouts f JOIN articles a ON a.id = f.article_id WHERE a.slug = 'quiet'`); n != 0 {
		t.Errorf("an article nobody was notified of is marked announced")
	}

	if _, err := p.DownTo(ctx, 17); err != nil {
		t.Fatalf("migrate down to 17: %v", err)
	}
	if n := count(`SELECT count(*) FROM information_schema.columns WHERE table_name = 'idempotency_keys' AND column_name = 'session_user_id'`); n != 0 {
		t.Errorf("session_user_id survived the rollback")
	}
	if _, err := p.UpTo(ctx, 18); err != nil {
		t.Fatalf("migrate up to 18 again: %v", err)
	}
}
