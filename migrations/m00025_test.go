package migrations_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/migrations"
)

// Migration 00025 on a database with accounts: every account waits for the email recheck (which
// the server runs in Go: IDNA is not SQL), every new email asks for one again, and the rollback
// gives the non-ASCII emails 00016's approximation of the old rule back, marking a row whose form
// another account holds as duplicate instead of failing.
func TestMigration00025_EmailRecheckAndRollback(t *testing.T) {
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
	canonical := func(username string) (string, bool) {
		t.Helper()
		var c string
		var checked bool
		if err := db.Pool.QueryRow(ctx, `SELECT email_canonical, email_canonical_checked FROM users WHERE username = $1`, username).Scan(&c, &checked); err != nil {
			t.Fatal(err)
		}
		return c, checked
	}
	exec(`INSERT INTO users (email, username, password_hash) VALUES ('v@straße.de', 'idn', 'h'), ('bob@example.com', 'bob', 'h')`)
	if _, err := p.UpTo(ctx, 25); err != nil {
		t.Fatalf("migrate up to 25: %v", err)
	}
	if _, checked := canonical("idn"); checked {
		t.Fatal("an account from before 00025 does not wait for the recheck")
	}

	// What the server's recheck does (repository.UserEmails.RecheckEmails), and a new account the
	// mailbox rule allows beside bob@example.com.
	exec(`UPDATE users SET email_canonical = 'v@xn--strae-oqa.de', email_canonical_checked = true WHERE username = 'idn'`)
	exec(`INSERT INTO users (email, email_canonical, username, password_hash, email_canonical_checked)
		VALUES ('ＢOB@example.com', 'Ｂob@example.com', 'widebob', 'h', true)`)
	exec(`UPDATE users SET bio = 'hi' WHERE username = 'widebob'`)
	if _, checked := canonical("widebob"); !checked {
		t.Fatal("a write that kept the email asked for a recheck")
	}
	exec(`UPDATE users SET email = 'ＢOB2@example.com', email_canonical = 'Ｂob2@example.com' WHERE username = 'widebob'`)
	if _, checked := canonical("widebob"); checked {
		t.Fatal("a new email did not ask for a recheck")
	}
	exec(`UPDATE users SET email = 'ＢOB@example.com', email_canonical = 'Ｂob@example.com' WHERE username = 'widebob'`)

	if _, err := p.DownTo(ctx, 24); err != nil {
		t.Fatalf("migrate down to 24: %v", err)
	}
	if got := canonicalAt24(t, db, "idn"); got != "v@straße.de" {
		t.Fatalf("after the rollback v@straße.de has %q, want 00016's lower(NFKC) form", got)
	}
	if got := canonicalAt24(t, db, "widebob"); got == "bob@example.com" || got != "duplicate:"+idOf(t, db, "widebob")+":bob@example.com" {
		t.Fatalf("after the rollback ＢOB@example.com has %q, want a duplicate of bob@example.com's form", got)
	}
	if got := canonicalAt24(t, db, "bob"); got != "bob@example.com" {
		t.Fatalf("bob lost his form: %q", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
}

// canonicalAt24 reads an account's canonical email where 00025's column is gone.
func canonicalAt24(t *testing.T, db *testenv.DB, username string) string {
	t.Helper()
	var c string
	if err := db.Pool.QueryRow(context.Background(), `SELECT email_canonical FROM users WHERE username = $1`, username).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

func idOf(t *testing.T, db *testenv.DB, username string) string {
	t.Helper()
	var id string
	if err := db.Pool.QueryRow(context.Background(), `SELECT id::text FROM users WHERE username = $1`, username).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
