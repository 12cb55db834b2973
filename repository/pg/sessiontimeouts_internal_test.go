package pg

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// openTimeoutPool opens a pool whose sessions carry the two timeouts in milliseconds, the way
// ioc.SessionTimeouts sets them on the server's pools (0: not set).
func openTimeoutPool(t *testing.T, statement, idleInTx time.Duration) *pgxpool.Pool {
	t.Helper()
	db := testenv.NewDB(t)
	pcfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 2
	if statement > 0 {
		pcfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(statement.Milliseconds(), 10)
	}
	if idleInTx > 0 {
		pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(idleInTx.Milliseconds(), 10)
	}
	testenv.LimitPool(pcfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(t.Context(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestSessionTimeouts(t *testing.T) {
	t.Parallel()

	t.Run("a statement past the timeout is cancelled as unavailable", func(t *testing.T) {
		t.Parallel()
		pool := openTimeoutPool(t, 100*time.Millisecond, 0)
		start := time.Now()
		_, err := pool.Exec(t.Context(), "SELECT pg_sleep(30)")
		if elapsed := time.Since(start); elapsed > 15*time.Second {
			t.Fatalf("the statement ran %v: the timeout did not cancel it", elapsed)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
			t.Fatalf("err = %v, want SQLSTATE 57014 (query_canceled)", err)
		}
		if got := Translate(err); !errors.Is(got, domain.ErrUnavailable) {
			t.Fatalf("Translate(%v) = %v, want domain.ErrUnavailable (503, not 500)", err, got)
		}
		// The connection stays usable: only the statement was cancelled.
		if _, err := pool.Exec(t.Context(), "SELECT 1"); err != nil {
			t.Fatalf("after the timeout: %v", err)
		}
	})

	t.Run("an idle transaction is ended and reads as unavailable", func(t *testing.T) {
		t.Parallel()
		pool := openTimeoutPool(t, 0, 100*time.Millisecond)
		// The backend's pid first, outside the transaction: inside it, a machine busy enough to
		// pause this goroutine for the timeout between BEGIN and the query had the session ended
		// before the pid was known.
		conn, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var pid int32
		if err := conn.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(t.Context()) }()
		// Wait (on the server's word, not a sleep of our own) until PostgreSQL has ended the session.
		deadline := time.Now().Add(15 * time.Second)
		for {
			var alive bool
			if err := pool.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)", pid).Scan(&alive); err != nil {
				t.Fatal(err)
			}
			if !alive {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("backend %d still alive: idle_in_transaction_session_timeout not applied", pid)
			}
			if _, err := pool.Exec(t.Context(), "SELECT pg_sleep(0.05)"); err != nil { // server-side pause between polls
				t.Fatal(err)
			}
		}
		_, err = tx.Exec(t.Context(), "SELECT 1")
		if err == nil {
			t.Fatal("the idle transaction still ran a statement")
		}
		if got := Translate(err); !errors.Is(got, domain.ErrUnavailable) {
			t.Fatalf("Translate(%v) = %v, want domain.ErrUnavailable", err, got)
		}
	})
}
