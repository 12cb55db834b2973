package repository_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// newIdempotency is the idempotency path as the app wires it: service.IdempotencyRunner over the
// durable room's store, in units of work on pool.
func newIdempotency(pool *pgxpool.Pool, wait service.IdempotencyWait) *service.IdempotencyRunner {
	return service.NewIdempotencyRunner(pg.NewUnitOfWork(pool), durable.NewIdempotencyStore(pool, repository.NewQuerier()), wait)
}

// idemCall is one IdempotencyRunner.Do outcome.
type idemCall struct {
	res      domain.StoredResponse
	replayed bool
	err      error
}

func TestIdempotencyStore(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	s := setupSafety(t, db)
	ctx := t.Context()
	newScope := func() string { return "user:" + testenv.RandomID(6) }
	created := domain.StoredResponse{Status: 201, Body: []byte(`{"article":{"slug":"x"}}`)}
	answer := func(r domain.StoredResponse) func(context.Context, service.Tx) domain.StoredResponse {
		return func(context.Context, service.Tx) domain.StoredResponse { return r }
	}
	never := func(t *testing.T) func(context.Context, service.Tx) domain.StoredResponse {
		return func(context.Context, service.Tx) domain.StoredResponse {
			t.Error("run called, want the stored response")
			return domain.StoredResponse{Status: 599}
		}
	}
	do := func(t *testing.T, scope, key, hash string, run func(context.Context, service.Tx) domain.StoredResponse) idemCall {
		t.Helper()
		res, replayed, err := s.idem.Do(ctx, service.IdempotencyKey{Scope: scope, Key: key, RequestHash: hash}, run)
		return idemCall{res, replayed, err}
	}
	requireCall := func(t *testing.T, got idemCall, want domain.StoredResponse, replayed bool) {
		t.Helper()
		if got.err != nil || got.replayed != replayed || got.res.Status != want.Status || !bytes.Equal(got.res.Body, want.Body) {
			t.Fatalf("Do = %d %q replayed=%v err=%v; want %d %q replayed=%v", got.res.Status, got.res.Body, got.replayed, got.err, want.Status, want.Body, replayed)
		}
	}
	stored := func(t *testing.T, scope, key string) int64 {
		t.Helper()
		return s.count(t, `SELECT count(*) FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key)
	}

	t.Run("the first request runs and is stored; a retry replays it without running", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		requireCall(t, do(t, scope, "k1", "h1", answer(created)), created, false)
		requireCall(t, do(t, scope, "k1", "h1", never(t)), created, true)
		requireCall(t, do(t, scope, "k1", "h1", never(t)), created, true)
	})

	t.Run("the same key for another request is a mismatch", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		requireCall(t, do(t, scope, "k1", "h1", answer(created)), created, false)
		if got := do(t, scope, "k1", "h2", never(t)); !errors.Is(got.err, domain.ErrIdempotencyMismatch) {
			t.Fatalf("Do = %+v, want ErrIdempotencyMismatch", got)
		}
	})

	t.Run("keys are per scope", func(t *testing.T) {
		t.Parallel()
		a, b := newScope(), newScope()
		other := domain.StoredResponse{Status: 201, Body: []byte(`{"other":true}`)}
		requireCall(t, do(t, a, "shared", "h1", answer(created)), created, false)
		requireCall(t, do(t, b, "shared", "h2", answer(other)), other, false)
		requireCall(t, do(t, a, "shared", "h1", never(t)), created, true)
	})

	t.Run("a key in flight is refused at once, not waited for", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		entered, release := make(chan struct{}), make(chan struct{})
		first := make(chan idemCall, 1)
		go func() {
			res, replayed, err := s.idem.Do(ctx, service.IdempotencyKey{Scope: scope, Key: "busy", RequestHash: "h1"}, func(context.Context, service.Tx) domain.StoredResponse {
				close(entered)
				<-release
				return created
			})
			first <- idemCall{res, replayed, err}
		}()
		testenv.Recv(t, entered, "the first request to start running")

		got := do(t, scope, "busy", "h1", never(t))
		if !errors.Is(got.err, domain.ErrIdempotencyInFlight) || !errors.Is(got.err, domain.ErrConflict) {
			t.Fatalf("Do while in flight = %+v, want ErrIdempotencyInFlight (a conflict)", got)
		}
		// Even a different request under the busy key is "in flight", not a mismatch: nothing is
		// stored yet to compare with.
		if got := do(t, scope, "busy", "h2", never(t)); !errors.Is(got.err, domain.ErrIdempotencyInFlight) {
			t.Fatalf("other request while in flight = %+v, want ErrIdempotencyInFlight", got)
		}
		// Other keys of the scope are not held up.
		requireCall(t, do(t, scope, "free", "h1", answer(created)), created, false)

		close(release)
		requireCall(t, testenv.Recv(t, first, "the first request to finish"), created, false)
		requireCall(t, do(t, scope, "busy", "h1", never(t)), created, true)
	})

	t.Run("a server error is not stored and its writes roll back; a retry runs again", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		u := createUser(t, s.users, userOpts{})
		var sids []string
		runs := 0
		run := func(status int) func(context.Context, service.Tx) domain.StoredResponse {
			return func(ctx context.Context, tx service.Tx) domain.StoredResponse {
				runs++
				sid := domain.NewSessionID()
				sids = append(sids, sid)
				if _, err := s.sessions.CreateIn(ctx, tx, sid, u.ID, "", domain.HashSecret(sid), time.Now().Add(time.Hour), sessionCap); err != nil {
					t.Errorf("write inside the request: %v", err)
				}
				return domain.StoredResponse{Status: status, Body: []byte(`{"status":"` + time.Now().String() + `"}`)}
			}
		}
		for _, status := range []int{500, 503} {
			got := do(t, scope, "k", "h", run(status))
			if got.err != nil || got.replayed || got.res.Status != status {
				t.Fatalf("Do = %+v, want the %d answered, not replayed, no error", got, status)
			}
			if n := stored(t, scope, "k"); n != 0 {
				t.Fatalf("a %d was stored", status)
			}
		}
		ok := do(t, scope, "k", "h", run(201))
		if ok.err != nil || ok.replayed || ok.res.Status != 201 || runs != 3 {
			t.Fatalf("retry after errors = %+v after %d runs; want it to run (3rd time) and answer 201", ok, runs)
		}
		requireCall(t, do(t, scope, "k", "h", never(t)), ok.res, true)
		for i, sid := range sids {
			want := int64(0)
			if i == len(sids)-1 {
				want = 1
			}
			if n := s.count(t, `SELECT count(*) FROM sessions WHERE id = $1`, sid); n != want {
				t.Errorf("run %d left %d sessions, want %d", i+1, n, want)
			}
		}
	})

	t.Run("the business write and the stored response commit together", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		u := createUser(t, s.users, userOpts{})
		sid := domain.NewSessionID()
		requireCall(t, do(t, scope, "k", "h", func(ctx context.Context, tx service.Tx) domain.StoredResponse {
			if _, err := s.sessions.CreateIn(ctx, tx, sid, u.ID, "", domain.HashSecret(sid), time.Now().Add(time.Hour), sessionCap); err != nil {
				t.Errorf("write inside the request: %v", err)
			}
			// Not visible outside the transaction yet.
			if n := s.count(t, `SELECT count(*) FROM sessions WHERE id = $1`, sid); n != 0 {
				t.Errorf("the write is visible before the response is stored")
			}
			return created
		}), created, false)
		if n := s.count(t, `SELECT count(*) FROM sessions WHERE id = $1`, sid); n != 1 {
			t.Fatalf("%d sessions after commit, want 1", n)
		}
	})

	t.Run("an error answer after a failed statement is stored, and the failed write leaves nothing", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		taken := createUser(t, s.users, userOpts{})
		rejected := domain.StoredResponse{Status: 422, Body: []byte(`{"errors":{"email":["has already been taken"]}}`)}
		sid := domain.NewSessionID()
		got := do(t, scope, "k", "h", func(ctx context.Context, tx service.Tx) domain.StoredResponse {
			// A write that succeeds, then one that fails inside the request's unit of work, as a
			// registration with a taken email does.
			if _, err := s.sessions.CreateIn(ctx, tx, sid, taken.ID, "", domain.HashSecret(sid), time.Now().Add(time.Hour), sessionCap); err != nil {
				t.Errorf("first write: %v", err)
			}
			_, err := s.users.CreateIn(ctx, tx, domain.User{Email: taken.Email, Username: uniqueName("dup"), PasswordHash: "x"})
			if !errors.Is(err, domain.ErrEmailTaken) {
				t.Errorf("duplicate insert = %v, want ErrEmailTaken", err)
			}
			return rejected
		})
		requireCall(t, got, rejected, false)
		requireCall(t, do(t, scope, "k", "h", never(t)), rejected, true)
		if n := s.count(t, `SELECT count(*) FROM sessions WHERE id = $1`, sid); n != 0 {
			t.Fatalf("the rejected request's earlier write survived (%d rows)", n)
		}
	})

	t.Run("a success answer over a failed statement is not stored", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		taken := createUser(t, s.users, userOpts{})
		got := do(t, scope, "k", "h", func(ctx context.Context, tx service.Tx) domain.StoredResponse {
			// A statement that fails outside any savepoint aborts the whole unit of work.
			_, _ = tx.(*pg.Tx).Exec(ctx, "INSERT INTO users (email, username, password_hash) VALUES ($1, $2, 'x')", taken.Email, uniqueName("dup"))
			return created // a use case that swallowed the error
		})
		if got.err == nil {
			t.Fatalf("Do = %+v, want an error: the transaction is aborted, its writes are gone", got)
		}
		if n := stored(t, scope, "k"); n != 0 {
			t.Fatal("a 201 was stored for a request whose writes rolled back")
		}
	})

	t.Run("a panicking request releases its key", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic did not propagate")
				}
			}()
			_, _, _ = s.idem.Do(ctx, service.IdempotencyKey{Scope: scope, Key: "k", RequestHash: "h"}, func(context.Context, service.Tx) domain.StoredResponse { panic("handler bug") })
		}()
		// Not "in flight" forever: the transaction and its advisory lock were released.
		requireCall(t, do(t, scope, "k", "h", answer(created)), created, false)
	})

	t.Run("keys older than 24 hours are forgotten: the request runs anew", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		if _, err := s.pool.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body, created_at)
			VALUES ($1, 'old', 'another-hash', 201, '{"stale":true}', now() - interval '25 hours')`, scope); err != nil {
			t.Fatal(err)
		}
		requireCall(t, do(t, scope, "old", "h", answer(created)), created, false)
		requireCall(t, do(t, scope, "old", "h", never(t)), created, true)
	})

	t.Run("concurrent duplicates run once; the others are in flight or replays of it", func(t *testing.T) {
		t.Parallel()
		scope := newScope()
		const n = 30
		var runs atomic.Int64
		calls := make([]idemCall, n)
		testenv.Together(n, func(i int) {
			res, replayed, err := s.idem.Do(ctx, service.IdempotencyKey{Scope: scope, Key: "k", RequestHash: "h"}, func(context.Context, service.Tx) domain.StoredResponse {
				runs.Add(1)
				return created
			})
			calls[i] = idemCall{res, replayed, err}
		})
		if r := runs.Load(); r != 1 {
			t.Fatalf("ran %d times, want 1", r)
		}
		inFlight := 0
		for i, c := range calls {
			if errors.Is(c.err, domain.ErrIdempotencyInFlight) {
				inFlight++
				continue
			}
			if c.err != nil || c.res.Status != created.Status || !bytes.Equal(c.res.Body, created.Body) {
				t.Fatalf("call %d = %+v", i, c)
			}
		}
		t.Logf("%d of %d concurrent duplicates were refused as in flight", inFlight, n)
	})

	t.Run("duplicates in one process wait without touching the database, then replay", func(t *testing.T) {
		t.Parallel()
		// A pool of the subtest's own, so its acquire count is this subtest's alone.
		cfg, err := pgxpool.ParseConfig(db.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = 2
		testenv.LimitPool(cfg)
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		store := newIdempotency(pool, 0)
		const dups = 40
		waiting := make(chan struct{}, dups)
		store.OnLocalWait(func() { waiting <- struct{}{} })
		key := service.IdempotencyKey{Scope: newScope(), Key: "k", RequestHash: "h"}

		entered, release := make(chan struct{}), make(chan struct{})
		first := make(chan idemCall, 1)
		go func() {
			res, replayed, err := store.Do(ctx, key, func(context.Context, service.Tx) domain.StoredResponse {
				close(entered)
				<-release
				return created
			})
			first <- idemCall{res, replayed, err}
		}()
		testenv.Recv(t, entered, "the first request to start running")
		acquired := pool.Stat().AcquireCount()

		calls := make(chan idemCall, dups)
		for range dups {
			go func() {
				res, replayed, err := store.Do(ctx, key, never(t))
				calls <- idemCall{res, replayed, err}
			}()
		}
		for range dups {
			testenv.Recv(t, waiting, "a duplicate to wait")
		}
		if n := pool.Stat().AcquireCount() - acquired; n != 0 {
			t.Fatalf("%d duplicates waiting in process took %d connections, want none", dups, n)
		}
		close(release)
		requireCall(t, testenv.Recv(t, first, "the first request to finish"), created, false)
		for range dups {
			requireCall(t, testenv.Recv(t, calls, "a duplicate to finish"), created, true)
		}
	})
}
