package migrations_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/migrations"
)

// TestCanonicalEmailsMigration: 00016 backfills email_canonical on existing rows; look-alike
// accounts made before it keep their rows, the oldest keeps the canonical form, and the unique
// index then refuses new look-alikes.
func TestCanonicalEmailsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
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
	if _, err := p.UpTo(ctx, 14); err != nil {
		t.Fatalf("migrate to 00014: %v", err)
	}
	// Before 00016 emails were unique as stored, so these three could coexist.
	if _, err := db.Pool.Exec(ctx, `INSERT INTO users (email, username, password_hash) VALUES
		('ann@example.com', 'ann1', 'x'), ('ＡNN@example.com', 'ann2', 'x'), ('bob@example.com', 'bob', 'x')`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	got := map[string]string{}
	rows, err := db.Pool.Query(ctx, `SELECT username, email_canonical FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, canonical string
		if err := rows.Scan(&name, &canonical); err != nil {
			t.Fatal(err)
		}
		got[name] = canonical
	}
	if got["ann1"] != "ann@example.com" || got["bob"] != "bob@example.com" || got["ann2"] == "ann@example.com" || got["ann2"] == "" {
		t.Fatalf("canonical forms after 00016: %v", got)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO users (email, username, password_hash) VALUES ('Bob@Example.com', 'bob2', 'x')`); err == nil {
		t.Fatal("a look-alike of bob@example.com was inserted after 00016")
	}
}
