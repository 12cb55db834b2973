package repository_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// fastRetry retries at once, so the tests that count attempts do not wait on backoff.
var fastRetry = domain.RetryPolicy{MaxAttempts: 3, Base: time.Microsecond, Max: time.Second}

func pgErr(code string) error { return &pgconn.PgError{Code: code, Message: "injected " + code} }

func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestRunTx_RetryPolicy(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	if _, err := db.Pool.Exec(t.Context(), `CREATE TABLE tx_marks (label TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	marks := func(t *testing.T, label string) int64 {
		t.Helper()
		var n int64
		if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM tx_marks WHERE label = $1`, label).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	tests := []struct {
		name   string
		policy domain.RetryPolicy
		// fails is the error attempt i (from 1) returns after writing its mark; nil commits.
		fails     func(attempt int) error
		wantCalls int
		wantCode  string // "" for success
		wantErr   error  // checked with errors.Is when set
		wantMarks int64  // committed marks: only a successful attempt's write survives
	}{
		{
			name:   "serialization failures are retried until one attempt commits",
			policy: fastRetry,
			fails: func(i int) error {
				if i < 3 {
					return pgErr("40001")
				}
				return nil
			},
			wantCalls: 3, wantMarks: 1,
		},
		{
			name:   "a deadlock is retried",
			policy: fastRetry,
			fails: func(i int) error {
				if i == 1 {
					return fmt.Errorf("update: %w", pgErr("40P01")) // wrapped, as repositories return it
				}
				return nil
			},
			wantCalls: 2, wantMarks: 1,
		},
		{
			name:      "retries stop after MaxAttempts and return the last failure",
			policy:    fastRetry,
			fails:     func(int) error { return pgErr("40001") },
			wantCalls: 3, wantCode: "40001", wantMarks: 0,
		},
		{
			name:      "MaxAttempts below one still tries once",
			policy:    domain.RetryPolicy{MaxAttempts: 0, Base: time.Microsecond, Max: time.Second},
			fails:     func(int) error { return pgErr("40001") },
			wantCalls: 1, wantCode: "40001",
		},
		{
			name:      "a unique violation is an answer, not a race: returned at once",
			policy:    fastRetry,
			fails:     func(int) error { return pgErr("23505") },
			wantCalls: 1, wantCode: "23505",
		},
		{
			name:      "any other error is returned at once",
			policy:    fastRetry,
			fails:     func(int) error { return domain.ErrNotFound },
			wantCalls: 1, wantErr: domain.ErrNotFound,
		},
		{
			name:      "success commits on the first attempt",
			policy:    fastRetry,
			fails:     func(int) error { return nil },
			wantCalls: 1, wantMarks: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			label := testenv.RandomID(6)
			calls := 0
			err := pg.RunTx(t.Context(), db.Pool, tc.policy, func(ctx context.Context, tx pgx.Tx) error {
				calls++
				if _, err := tx.Exec(ctx, `INSERT INTO tx_marks (label) VALUES ($1)`, label); err != nil {
					return err
				}
				return tc.fails(calls)
			})
			if calls != tc.wantCalls {
				t.Errorf("fn ran %d times, want %d", calls, tc.wantCalls)
			}
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("err = %v, want %v", err, tc.wantErr)
				}
			case tc.wantCode != "":
				if got := pgCode(err); got != tc.wantCode {
					t.Errorf("err = %v (code %q), want SQLSTATE %s", err, got, tc.wantCode)
				}
			case err != nil:
				t.Errorf("err = %v, want nil", err)
			}
			if got := marks(t, label); got != tc.wantMarks {
				t.Errorf("%d committed marks, want %d (failed attempts must roll back)", got, tc.wantMarks)
			}
		})
	}

	t.Run("cancellation during the backoff ends the wait", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		failed := make(chan struct{})
		calls := 0
		done := make(chan error, 1)
		go func() {
			// An hour of backoff: only the cancellation can end it.
			done <- pg.RunTx(ctx, db.Pool, domain.RetryPolicy{MaxAttempts: 5, Base: time.Hour, Max: time.Hour}, func(context.Context, pgx.Tx) error {
				calls++
				close(failed)
				return pgErr("40001")
			})
		}()
		testenv.Recv(t, failed, "the first attempt")
		cancel()
		err := testenv.Recv(t, done, "RunTx to return after the cancellation")
		if !errors.Is(err, context.Canceled) || pgCode(err) != "40001" {
			t.Fatalf("err = %v, want the serialization failure joined with context.Canceled", err)
		}
		if calls != 1 {
			t.Fatalf("fn ran %d times after cancellation, want 1", calls)
		}
	})

	t.Run("a cancelled context is not retried", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		calls := 0
		err := pg.RunTx(ctx, db.Pool, fastRetry, func(context.Context, pgx.Tx) error { calls++; return nil })
		if !errors.Is(err, context.Canceled) || calls != 0 {
			t.Fatalf("err = %v after %d calls, want context.Canceled before fn runs", err, calls)
		}
	})
}

// barrier lets n goroutines through only once all n have arrived.
type barrier struct {
	wg sync.WaitGroup
}

func newBarrier(n int) *barrier {
	b := &barrier{}
	b.wg.Add(n)
	return b
}

func (b *barrier) arrive() { b.wg.Done(); b.wg.Wait() }

func TestRunTx_RealConflicts(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := t.Context()

	t.Run("write skew under SERIALIZABLE: the loser is retried and sees the winner", func(t *testing.T) {
		t.Parallel()
		if _, err := db.Pool.Exec(ctx, `CREATE TABLE oncall (id INT PRIMARY KEY, on_call BOOL NOT NULL);
			INSERT INTO oncall VALUES (1, true), (2, true)`); err != nil {
			t.Fatal(err)
		}
		// Each doctor goes off call if someone else is still on call: run one after the other,
		// exactly one of them goes; run concurrently without SSI, both would (write skew).
		bothRead := newBarrier(2)
		var calls atomic.Int64
		var conflicts atomic.Int64
		goOffCall := func(id int) error {
			attempt := 0
			return pg.RunTx(ctx, db.Pool, domain.RetryPolicy{MaxAttempts: 5, Base: time.Millisecond, Max: time.Second}, func(ctx context.Context, tx pgx.Tx) error {
				attempt++
				calls.Add(1)
				if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL SERIALIZABLE`); err != nil {
					return err
				}
				var onCall int
				if err := tx.QueryRow(ctx, `SELECT count(*) FROM oncall WHERE on_call`).Scan(&onCall); err != nil {
					return err
				}
				if attempt == 1 {
					bothRead.arrive() // both have read "2 on call" before either writes
				}
				if onCall < 2 {
					return nil
				}
				_, err := tx.Exec(ctx, `UPDATE oncall SET on_call = false WHERE id = $1`, id)
				if pgCode(err) == "40001" {
					conflicts.Add(1)
				}
				return err
			})
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { errs[i] = goOffCall(i + 1) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("doctor %d: %v", i+1, err)
			}
		}
		var onCall int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM oncall WHERE on_call`).Scan(&onCall); err != nil {
			t.Fatal(err)
		}
		if onCall != 1 {
			t.Fatalf("%d doctors on call, want 1: the write skew was not caught", onCall)
		}
		// One attempt each plus at least one retry of the loser (its 40001 comes from COMMIT, or
		// from the UPDATE; both are retried). PostgreSQL normally cancels the pivot at its COMMIT,
		// after the winner committed, so the retry sees one doctor on call and exactly 3 run.
		if got := calls.Load(); got < 3 {
			t.Fatalf("%d attempts, want at least 3 (the loser retried)", got)
		}
		t.Logf("%d attempts; serialization failure raised by an UPDATE %d time(s), otherwise by COMMIT", calls.Load(), conflicts.Load())
	})

	t.Run("a real deadlock: the victim is retried", func(t *testing.T) {
		t.Parallel()
		if _, err := db.Pool.Exec(ctx, `CREATE TABLE locks (id INT PRIMARY KEY, n INT NOT NULL);
			INSERT INTO locks VALUES (1, 0), (2, 0)`); err != nil {
			t.Fatal(err)
		}
		firstLocked := newBarrier(2)
		var calls, deadlocks atomic.Int64
		transfer := func(first, second int) error {
			attempt := 0
			return pg.RunTx(ctx, db.Pool, domain.RetryPolicy{MaxAttempts: 5, Base: time.Millisecond, Max: time.Second}, func(ctx context.Context, tx pgx.Tx) error {
				attempt++
				calls.Add(1)
				if _, err := tx.Exec(ctx, `SET LOCAL deadlock_timeout = '50ms'`); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `UPDATE locks SET n = n + 1 WHERE id = $1`, first); err != nil {
					return err
				}
				if attempt == 1 {
					firstLocked.arrive() // each holds one row and now wants the other's
				}
				_, err := tx.Exec(ctx, `UPDATE locks SET n = n + 1 WHERE id = $1`, second)
				if pgCode(err) == "40P01" {
					deadlocks.Add(1)
				}
				return err
			})
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		wg.Go(func() { errs[0] = transfer(1, 2) })
		wg.Go(func() { errs[1] = transfer(2, 1) })
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("transaction %d: %v", i, err)
			}
		}
		// Usually one deadlock. The victim's retry may win the freed row before the survivor wakes
		// up and so deadlock once more; each deadlock costs exactly one more attempt.
		d, c := deadlocks.Load(), calls.Load()
		if d < 1 || c != 2+d {
			t.Fatalf("%d deadlocks and %d attempts, want at least 1 deadlock and one retry per deadlock", d, c)
		}
		t.Logf("%d deadlock(s), %d attempts", d, c)
		var sum int
		if err := db.Pool.QueryRow(ctx, `SELECT sum(n) FROM locks`).Scan(&sum); err != nil {
			t.Fatal(err)
		}
		if sum != 4 {
			t.Fatalf("sum = %d, want 4: both transactions applied exactly once", sum)
		}
	})
}

// poolThroughCutProxy returns a one-connection pool on the database at url whose connection runs
// through a proxy the test can cut.
func poolThroughCutProxy(t *testing.T, url string) (*pgxpool.Pool, *testenv.CutProxy) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewCutProxy(t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
	host, port, _ := net.SplitHostPort(proxy.Addr())
	p, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
	cfg.MaxConns = 1
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, proxy
}

func TestRunTx_CommitOutcomeUnknown(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := t.Context()
	if _, err := db.Pool.Exec(ctx, `CREATE TABLE commit_marks (label TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	marks := func(t *testing.T, label string) int64 {
		t.Helper()
		var n int64
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM commit_marks WHERE label = $1`, label).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("the connection breaks right before COMMIT: ErrCommitUnknown, not retried", func(t *testing.T) {
		t.Parallel()
		pool, proxy := poolThroughCutProxy(t, db.URL)

		label := testenv.RandomID(6)
		calls := 0
		err := pg.RunTx(ctx, pool, fastRetry, func(ctx context.Context, tx pgx.Tx) error {
			calls++
			if _, err := tx.Exec(ctx, `INSERT INTO commit_marks VALUES ($1)`, label); err != nil {
				return err
			}
			proxy.Cut() // COMMIT now goes into a dead socket
			return nil
		})
		if !errors.Is(err, pg.ErrCommitUnknown) {
			t.Fatalf("err = %v, want ErrCommitUnknown", err)
		}
		if calls != 1 {
			t.Fatalf("fn ran %d times: an unknown commit outcome must not be retried blindly", calls)
		}
		// Here the COMMIT never reached the server, so PostgreSQL rolled the transaction back when
		// the connection died; the caller could not have known.
		if n := marks(t, label); n != 0 {
			t.Fatalf("%d marks committed, want 0", n)
		}
	})

	t.Run("the server terminates the backend before COMMIT: an error, never retried, nothing applied", func(t *testing.T) {
		t.Parallel()
		label := testenv.RandomID(6)
		calls := 0
		err := pg.RunTx(ctx, db.Pool, fastRetry, func(ctx context.Context, tx pgx.Tx) error {
			calls++
			if _, err := tx.Exec(ctx, `INSERT INTO commit_marks VALUES ($1)`, label); err != nil {
				return err
			}
			var pid int32
			if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				return err
			}
			var ok bool
			// Waits (up to 5 s) until the backend is gone.
			if err := db.Pool.QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ok); err != nil || !ok {
				return fmt.Errorf("terminate backend %d: %v (%w)", pid, ok, err)
			}
			return nil
		})
		if err == nil {
			t.Fatal("commit on a terminated backend succeeded")
		}
		// Depending on whether the client reads the server's FATAL 57P01 before the socket reset,
		// the error is that PgError (the server said: rolled back) or ErrCommitUnknown.
		if !errors.Is(err, pg.ErrCommitUnknown) && pgCode(err) != "57P01" {
			t.Fatalf("err = %v, want ErrCommitUnknown or SQLSTATE 57P01", err)
		}
		t.Logf("commit on a terminated backend: %v", err)
		if calls != 1 {
			t.Fatalf("fn ran %d times, want 1", calls)
		}
		if n := marks(t, label); n != 0 {
			t.Fatalf("%d marks committed, want 0", n)
		}
	})
}

func TestUnitOfWork_RepositoryCallsJoinTheTransaction(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	s := setupSafety(t, db)
	uow := pg.NewUnitOfWork(s.pool)
	errRollback := errors.New("roll it all back")

	tests := []struct {
		name    string
		outcome error // what the unit of work's fn returns
		want    int64 // users and sessions that exist afterwards
	}{
		{name: "commit keeps both writes", outcome: nil, want: 1},
		{name: "rollback undoes both", outcome: errRollback, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("uow")
			sid := domain.NewSessionID()
			err := uow.InTx(t.Context(), func(stx service.Tx) error {
				tx := pg.TxOf(stx)
				u, err := s.users.CreateIn(t.Context(), tx, domain.User{Email: name + "@example.com", Username: name, PasswordHash: "x"})
				if err != nil {
					return err
				}
				if _, err := s.sessions.CreateIn(t.Context(), tx, sid, u.ID, "", domain.HashSecret(sid), time.Now().Add(time.Hour), sessionCap); err != nil {
					return err
				}
				return tc.outcome
			})
			if !errors.Is(err, tc.outcome) {
				t.Fatalf("InTx = %v, want %v", err, tc.outcome)
			}
			if n := s.count(t, `SELECT count(*) FROM users WHERE username = $1`, name); n != tc.want {
				t.Errorf("%d users, want %d", n, tc.want)
			}
			if n := s.count(t, `SELECT count(*) FROM sessions WHERE id = $1`, sid); n != tc.want {
				t.Errorf("%d sessions, want %d", n, tc.want)
			}
		})
	}

	t.Run("a rejected write in a savepoint leaves the unit of work usable", func(t *testing.T) {
		t.Parallel()
		taken := createUser(t, s.users, userOpts{})
		name := uniqueName("after")
		err := uow.InTx(t.Context(), func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			if _, err := s.users.CreateIn(t.Context(), tx, domain.User{Email: taken.Email, Username: uniqueName("dup"), PasswordHash: "x"}); !errors.Is(err, domain.ErrEmailTaken) {
				t.Errorf("duplicate email = %v, want ErrEmailTaken", err)
			}
			_, err := s.users.CreateIn(t.Context(), tx, domain.User{Email: name + "@example.com", Username: name, PasswordHash: "x"})
			return err
		})
		if err != nil {
			t.Fatalf("InTx = %v", err)
		}
		if n := s.count(t, `SELECT count(*) FROM users WHERE username = $1`, name); n != 1 {
			t.Fatalf("%d users written after the rejection, want 1", n)
		}
	})
}
