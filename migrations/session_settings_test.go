package migrations_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// The runner's sessions carry lock_timeout, so a migration stuck behind a lock fails instead of
// queueing every request behind it, and no statement_timeout, so a long index build finishes.
func TestRunnerSessionSettings(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	r := open(t, db.URL+"&statement_timeout=5000")

	t.Run("settings", func(t *testing.T) {
		var lockTimeout, statementTimeout string
		if err := r.DB().QueryRowContext(t.Context(), "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')").Scan(&lockTimeout, &statementTimeout); err != nil {
			t.Fatal(err)
		}
		if lockTimeout != "10s" || statementTimeout != "0" {
			t.Fatalf("lock_timeout %q, statement_timeout %q; want 10s and 0", lockTimeout, statementTimeout)
		}
	})

	t.Run("a statement behind a held lock gives up", func(t *testing.T) {
		holder, err := db.Pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = holder.Rollback(t.Context()) }()
		if _, err := holder.Exec(t.Context(), "LOCK TABLE users IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		conn, err := r.DB().Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		// Shorter than the runner's 10s, only to keep the test quick; the setting is the runner's.
		if _, err := conn.ExecContext(t.Context(), "SET lock_timeout = '200ms'"); err != nil {
			t.Fatal(err)
		}
		_, err = conn.ExecContext(t.Context(), "ALTER TABLE users ADD COLUMN never_added int")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
			t.Fatalf("err = %v, want SQLSTATE 55P03 (lock_not_available)", err)
		}
	})
}

// The runner takes the app's DATABASE_URL as it is, pool settings included ("A pool_max_conns in
// DATABASE_URL sets all three" pools, OPERATIONS.md): `inkwell migrate up` and
// INKWELL_MIGRATE_ON_START failed on such a URL, PostgreSQL refusing pool_max_conns as a setting.
func TestRunnerTakesTheAppsPoolSettings(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	r := open(t, db.URL+"&pool_max_conns=4&pool_max_conn_idle_time=500ms&pool_health_check_period=500ms")
	if _, err := r.UpAll(t.Context()); err != nil {
		t.Fatalf("migrate up with the app's pool settings in the URL: %v", err)
	}
}
