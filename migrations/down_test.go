package migrations_test

import (
	"context"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/migrations"
)

// TestRunner_DownToZeroAndUpAgain: every migration's Down section undoes its Up — on a fresh
// database, rolling everything back leaves no table of inkwell's, and applying everything again
// works; one step down and DownTo/UpTo a version move exactly as far as asked.
func TestRunner_DownToZeroAndUpAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.NewEmptyDB(t)
	r := open(t, db.URL)
	want := migrationCount(t)
	latest := migrations.LatestVersion()

	if ch, err := r.UpAll(ctx); err != nil || len(ch) != want {
		t.Fatalf("up: %d applied, %v; want %d", len(ch), err, want)
	}
	ch, err := r.Down(ctx)
	if err != nil || len(ch) != 1 || ch[0].Version != latest || !ch[0].Down {
		t.Fatalf("one step down: %v, %v", ch, err)
	}
	if v, err := r.Version(ctx); err != nil || v >= latest {
		t.Fatalf("version after one step down: %d, %v", v, err)
	}
	if ch, err := r.UpTo(ctx, latest); err != nil || len(ch) != 1 || ch[0].Version != latest {
		t.Fatalf("up to %d: %v, %v", latest, ch, err)
	}
	if ch, err := r.DownTo(ctx, 12); err != nil || len(ch) == 0 {
		t.Fatalf("down to 12: %v, %v", ch, err)
	}
	if v, _ := r.Version(ctx); v != 12 {
		t.Fatalf("version after down to 12: %d", v)
	}

	applied := countApplied(t, r)
	if ch, err := r.DownTo(ctx, 0); err != nil || len(ch) != applied {
		t.Fatalf("down to 0: %d rolled back, %v", len(ch), err)
	}
	var tables int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	// Functions of an extension (pg_trgm's) are not counted: a Down leaves extensions installed,
	// since they may have been there before the migration and other objects may use them.
	var functions, types int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
		AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`).Scan(&functions); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
		WHERE n.nspname = 'public' AND t.typtype IN ('c', 'e', 'd') AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind <> 'c')`).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if tables != 0 || functions != 0 || types != 0 {
		t.Fatalf("after down to 0: %d tables, %d functions, %d types left", tables, functions, types)
	}
	if ch, err := r.Down(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("down with nothing applied: %v, %v", ch, err)
	}
	if ch, err := r.UpAll(ctx); err != nil || len(ch) != want {
		t.Fatalf("up again: %d applied, %v; want %d", len(ch), err, want)
	}
	checkAllApplied(t, r, want)
}

// countApplied is how many migrations are applied.
func countApplied(t *testing.T, r *migrations.Runner) int {
	t.Helper()
	st, err := r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range st {
		if s.Applied {
			n++
		}
	}
	return n
}
