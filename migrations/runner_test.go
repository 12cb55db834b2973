package migrations_test

import (
	"context"
	"io/fs"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/migrations"
)

// These tests run against the real PostgreSQL (TEST_DATABASE_URL), each on a database of its own.

// migrationCount is how many migration files are embedded.
func migrationCount(t *testing.T) int {
	t.Helper()
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded migrations: %v, %v", files, err)
	}
	return len(files)
}

func open(t *testing.T, url string) *migrations.Runner {
	t.Helper()
	r, err := migrations.Open(url)
	if err != nil {
		t.Fatalf("open runner: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// appliedRows returns, per version, how many rows of goose's version table record it as applied.
func appliedRows(t *testing.T, pool *pgxpool.Pool) map[int64]int {
	t.Helper()
	rows, err := pool.Query(t.Context(),
		"SELECT version_id, count(*) FROM goose_db_version WHERE is_applied GROUP BY version_id")
	if err != nil {
		t.Fatalf("read goose_db_version: %v", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var v int64
		var n int
		if err := rows.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		out[v] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkAllApplied(t *testing.T, r *migrations.Runner, want int) []migrations.Status {
	t.Helper()
	st, err := r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != want {
		t.Fatalf("Status lists %d migrations, want %d", len(st), want)
	}
	for _, s := range st {
		if !s.Applied {
			t.Errorf("migration %d (%s) not applied", s.Version, s.Name)
		}
	}
	return st
}

// Acceptance: two instances running `migrate up` at once on a fresh database both succeed, and
// every migration is applied exactly once.
func TestRunner_ConcurrentUpAppliesEachMigrationOnce(t *testing.T) {
	t.Parallel()
	db := testenv.NewEmptyDB(t)
	want := migrationCount(t)
	log := testenv.Logger(t)
	runners := []*migrations.Runner{open(t, db.URL), open(t, db.URL)}

	var ready, done sync.WaitGroup
	start := make(chan struct{})
	applied := make([]int, len(runners))
	errs := make([]error, len(runners))
	ready.Add(len(runners))
	for i, r := range runners {
		done.Go(func() {
			ready.Done()
			<-start
			applied[i], errs[i] = r.Up(context.Background(), log)
		})
	}
	ready.Wait()
	close(start)
	done.Wait()

	for i, err := range errs {
		if err != nil {
			t.Fatalf("runner %d: %v", i, err)
		}
	}
	if applied[0]+applied[1] != want {
		t.Errorf("runners applied %d and %d migrations, want %d in total", applied[0], applied[1], want)
	}

	st := checkAllApplied(t, runners[0], want)
	rows := appliedRows(t, db.Pool)
	for _, s := range st {
		if rows[s.Version] != 1 {
			t.Errorf("version %d recorded as applied %d times, want once", s.Version, rows[s.Version])
		}
		delete(rows, s.Version)
	}
	delete(rows, 0) // goose's own initial row
	if len(rows) != 0 {
		t.Errorf("unknown versions recorded: %v", rows)
	}

	// A third run finds nothing to do.
	if n, err := open(t, db.URL).Up(context.Background(), log); err != nil || n != 0 {
		t.Errorf("Up on an up-to-date database: applied %d, %v; want 0", n, err)
	}
}

func TestRunner_StatusAndUpToDate(t *testing.T) {
	t.Parallel()
	want := migrationCount(t)

	t.Run("fresh database is all pending", func(t *testing.T) {
		t.Parallel()
		db := testenv.NewEmptyDB(t)
		st, err := open(t, db.URL).Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(st) != want {
			t.Fatalf("Status lists %d migrations, want %d", len(st), want)
		}
		for _, s := range st {
			if s.Applied || s.Version <= 0 || s.Name == "" {
				t.Errorf("fresh database: %+v, want a pending migration", s)
			}
		}
	})

	t.Run("Up on an up-to-date database applies nothing", func(t *testing.T) {
		t.Parallel()
		db := testenv.NewDB(t) // already migrated
		r := open(t, db.URL)
		if n, err := r.Up(context.Background(), testenv.Logger(t)); err != nil || n != 0 {
			t.Fatalf("Up applied %d, %v; want 0", n, err)
		}
		checkAllApplied(t, r, want)
	})
}
