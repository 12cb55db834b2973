package repository_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// safetyEnv is the repositories of sessions, API keys and idempotency keys on one database, wired
// as the app wires them: single statements go through repository.NewQuerier, so they join a
// transaction carried by the context.
type safetyEnv struct {
	pool     *pgxpool.Pool
	users    *repository.UserRepository
	sessions *repository.SessionRepository
	keys     *repository.APIKeyRepository
	idem     *repository.IdempotencyStore
}

func setupSafety(t *testing.T, db *testenv.DB) safetyEnv {
	t.Helper()
	r := testenv.NewRedis(t)
	log := testenv.Logger(t)
	// A pool of its own, larger than the default of max(4, CPUs): parallel subtests hold
	// transactions open (a request in flight) while others need connections.
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 16      // bounded: every package's tests share the server's max_connections (100 by default)
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	q := repository.NewQuerier()
	uc := cache.NewUserCache(r.Client, cache.Keyspace(r.Prefix), testPolicy, log)
	return safetyEnv{
		pool:     pool,
		users:    repository.NewUserRepository(pool, q, uc, log),
		sessions: repository.NewSessionRepository(pool, q),
		keys:     repository.NewAPIKeyRepository(pool, q),
		idem:     repository.NewIdempotencyStore(pool, q, 0),
	}
}

func (s safetyEnv) count(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := s.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// sessionCap is the live sessions per user the tests start under when the cap is not what they
// test.
const sessionCap = 1000

// sessionOpts describe a session to open; zero fields get fresh values.
type sessionOpts struct {
	User    domain.User // zero: a new user
	Refresh string      // the first refresh token; empty: random
	Expires time.Time   // zero: an hour from now
}

type openSession struct {
	ID      string
	UserID  int64
	Refresh string
}

func createSession(t *testing.T, s safetyEnv, o sessionOpts) openSession {
	t.Helper()
	if o.User.ID == 0 {
		o.User = createUser(t, s.users, userOpts{})
	}
	if o.Refresh == "" {
		o.Refresh = domain.NewSecret(32)
	}
	if o.Expires.IsZero() {
		o.Expires = time.Now().Add(time.Hour)
	}
	sid := domain.NewSessionID()
	if _, err := s.sessions.Create(t.Context(), sid, o.User.ID, "test-agent", domain.HashSecret(o.Refresh), o.Expires, sessionCap); err != nil {
		t.Fatalf("create session: %v", err)
	}
	return openSession{ID: sid, UserID: o.User.ID, Refresh: o.Refresh}
}

func (s safetyEnv) isRevoked(t *testing.T, sid string) bool {
	t.Helper()
	revoked, err := s.sessions.IsRevoked(t.Context(), sid)
	if err != nil {
		t.Fatalf("IsRevoked: %v", err)
	}
	return revoked
}

func TestSessionRepository(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	s := setupSafety(t, db)
	ctx := t.Context()
	hash := domain.HashSecret

	t.Run("rotate spends the token and stores the next in the same session", func(t *testing.T) {
		t.Parallel()
		sess := createSession(t, s, sessionOpts{})
		next := domain.NewSecret(32)
		now := time.Now()
		uid, sid, revoked, err := s.sessions.Rotate(ctx, hash(sess.Refresh), hash(next), now.Add(time.Hour), now)
		if err != nil || revoked || uid != sess.UserID || sid != sess.ID {
			t.Fatalf("Rotate = %d %q %v %v, want %d %q false nil", uid, sid, revoked, err, sess.UserID, sess.ID)
		}
		if n := s.count(t, `SELECT count(*) FROM refresh_tokens WHERE session_id = $1 AND spent_at IS NOT NULL`, sess.ID); n != 1 {
			t.Fatalf("%d spent tokens, want 1", n)
		}
		// The chain goes on with the new token.
		if _, _, _, err := s.sessions.Rotate(ctx, hash(next), hash(domain.NewSecret(32)), now.Add(time.Hour), now); err != nil {
			t.Fatalf("rotate the next token: %v", err)
		}
		if s.isRevoked(t, sess.ID) {
			t.Fatal("a normal rotation revoked the session")
		}
	})

	t.Run("a spent token presented again revokes the whole family", func(t *testing.T) {
		t.Parallel()
		sess := createSession(t, s, sessionOpts{})
		next := domain.NewSecret(32)
		now := time.Now()
		if _, _, _, err := s.sessions.Rotate(ctx, hash(sess.Refresh), hash(next), now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
		uid, sid, revoked, err := s.sessions.Rotate(ctx, hash(sess.Refresh), hash(domain.NewSecret(32)), now.Add(time.Hour), now)
		if !errors.Is(err, domain.ErrRefreshInvalid) || !revoked || uid != sess.UserID || sid != sess.ID {
			t.Fatalf("reuse = %d %q %v %v, want the session's user and id, revoked, ErrRefreshInvalid", uid, sid, revoked, err)
		}
		if !s.isRevoked(t, sess.ID) {
			t.Fatal("session not revoked after reuse")
		}
		// The newest token of the family is dead too, and presenting it does not "revoke" again.
		_, _, revoked, err = s.sessions.Rotate(ctx, hash(next), hash(domain.NewSecret(32)), now.Add(time.Hour), now)
		if !errors.Is(err, domain.ErrRefreshInvalid) || revoked {
			t.Fatalf("newest token after reuse = revoked %v, %v; want false, ErrRefreshInvalid", revoked, err)
		}
		if n := s.count(t, `SELECT count(*) FROM refresh_tokens WHERE session_id = $1`, sess.ID); n != 2 {
			t.Fatalf("%d tokens in the family, want 2 (no token minted after the reuse)", n)
		}
	})

	t.Run("tokens that are not valid", func(t *testing.T) {
		t.Parallel()
		t0 := time.Now()
		expired := createSession(t, s, sessionOpts{Expires: t0.Add(time.Minute)})
		revokedSess := createSession(t, s, sessionOpts{})
		if err := s.sessions.Revoke(ctx, revokedSess.ID); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name    string
			refresh string
			now     time.Time
			sid     string // session that must stay as it was ("" to skip)
		}{
			{name: "unknown", refresh: "never-issued", now: t0},
			{name: "expired (by the injected clock)", refresh: expired.Refresh, now: t0.Add(2 * time.Minute), sid: expired.ID},
			{name: "of a revoked session", refresh: revokedSess.Refresh, now: t0},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				_, _, revoked, err := s.sessions.Rotate(ctx, hash(tc.refresh), hash(domain.NewSecret(32)), tc.now.Add(time.Hour), tc.now)
				if !errors.Is(err, domain.ErrRefreshInvalid) || revoked {
					t.Fatalf("Rotate = revoked %v, %v; want false, ErrRefreshInvalid", revoked, err)
				}
				if !errors.Is(err, domain.ErrUnauthorized) {
					t.Fatalf("ErrRefreshInvalid must be an ErrUnauthorized: %v", err)
				}
				if tc.sid != "" && s.isRevoked(t, tc.sid) {
					t.Fatal("an expired token revoked its session")
				}
			})
		}
	})

	t.Run("concurrent rotations of one token: exactly one wins", func(t *testing.T) {
		t.Parallel()
		sess := createSession(t, s, sessionOpts{})
		const n = 20
		errs := make([]error, n)
		revokedBy := make([]bool, n)
		now := time.Now()
		together(n, func(i int) {
			_, _, revokedBy[i], errs[i] = s.sessions.Rotate(ctx, hash(sess.Refresh), hash(domain.NewSecret(32)), now.Add(time.Hour), now)
		})
		winners, revocations := 0, 0
		for i, err := range errs {
			switch {
			case err == nil:
				winners++
			case errors.Is(err, domain.ErrRefreshInvalid):
				if revokedBy[i] {
					revocations++
				}
			default:
				t.Fatalf("rotation %d: %v", i, err)
			}
		}
		if winners != 1 {
			t.Fatalf("%d rotations won, want exactly 1", winners)
		}
		// The losers saw a spent token, which is what a replay looks like: the family is revoked.
		if revocations < 1 || !s.isRevoked(t, sess.ID) {
			t.Fatalf("%d losers revoked the session (revoked now: %v); want at least one", revocations, s.isRevoked(t, sess.ID))
		}
		if c := s.count(t, `SELECT count(*) FROM refresh_tokens WHERE session_id = $1`, sess.ID); c != 2 {
			t.Fatalf("%d tokens in the family, want 2: one rotation minted one token", c)
		}
	})

	t.Run("revoke is idempotent and an unknown session counts as revoked", func(t *testing.T) {
		t.Parallel()
		sess := createSession(t, s, sessionOpts{})
		for range 2 {
			if err := s.sessions.Revoke(ctx, sess.ID); err != nil {
				t.Fatalf("Revoke: %v", err)
			}
		}
		if !s.isRevoked(t, sess.ID) {
			t.Fatal("not revoked")
		}
		if err := s.sessions.Revoke(ctx, "no-such-session"); err != nil {
			t.Fatalf("Revoke unknown: %v", err)
		}
		if !s.isRevoked(t, "no-such-session") {
			t.Fatal("an unknown session must count as revoked")
		}
	})

	t.Run("RevokedWithin lists the sessions revoked lately, by the clock of the database", func(t *testing.T) {
		t.Parallel()
		recent, old, live := createSession(t, s, sessionOpts{}), createSession(t, s, sessionOpts{}), createSession(t, s, sessionOpts{})
		for _, sess := range []openSession{recent, old} {
			if err := s.sessions.Revoke(ctx, sess.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.pool.Exec(ctx, `UPDATE sessions SET revoked_at = now() - interval '1 hour' WHERE id = $1`, old.ID); err != nil {
			t.Fatal(err)
		}
		has := func(d time.Duration) map[string]bool {
			t.Helper()
			ids, err := s.sessions.RevokedWithin(ctx, d)
			if err != nil {
				t.Fatalf("RevokedWithin(%s): %v", d, err)
			}
			m := map[string]bool{}
			for _, id := range ids {
				m[id] = true
			}
			return m
		}
		if got := has(time.Minute); !got[recent.ID] || got[old.ID] || got[live.ID] {
			t.Fatalf("revoked within a minute: %v; want %s and neither %s (an hour ago) nor %s (live)", got, recent.ID, old.ID, live.ID)
		}
		if got := has(2 * time.Hour); !got[recent.ID] || !got[old.ID] || got[live.ID] {
			t.Fatalf("revoked within two hours: %v; want %s and %s, not %s", got, recent.ID, old.ID, live.ID)
		}
	})

	t.Run("refresh tokens are stored as hashes only", func(t *testing.T) {
		t.Parallel()
		sess := createSession(t, s, sessionOpts{})
		if n := s.count(t, `SELECT count(*) FROM refresh_tokens WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, sess.Refresh); n != 1 {
			t.Fatalf("%d rows keyed by sha256(token), want 1", n)
		}
		if n := s.count(t, `SELECT count(*) FROM refresh_tokens r WHERE strpos(r::text, $1) > 0`, sess.Refresh); n != 0 {
			t.Fatal("the plaintext refresh token is stored")
		}
	})
}

func TestAPIKeyRepository(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	s := setupSafety(t, db)
	ctx := t.Context()

	t.Run("create, list, authenticate, revoke", func(t *testing.T) {
		t.Parallel()
		owner := createUser(t, s.users, userOpts{})
		k1, err := s.keys.Create(ctx, owner.ID, "ci", "iw_aaaaaa", domain.HashSecret("iw_key-one"), nil, service.MaxAPIKeys)
		if err != nil {
			t.Fatal(err)
		}
		k2, err := s.keys.Create(ctx, owner.ID, "laptop", "iw_bbbbbb", domain.HashSecret("iw_key-two"), nil, service.MaxAPIKeys)
		if err != nil {
			t.Fatal(err)
		}
		if k1.UserID != owner.ID || k1.Name != "ci" || k1.Prefix != "iw_aaaaaa" || k1.CreatedAt.IsZero() || k1.LastUsedAt != nil {
			t.Fatalf("created %+v", k1)
		}
		list, err := s.keys.List(ctx, owner.ID)
		if err != nil || len(list) != 2 || list[0].ID != k2.ID || list[1].ID != k1.ID {
			t.Fatalf("List = %+v, %v; want k2 then k1", list, err)
		}

		cred, err := s.keys.Authenticate(ctx, domain.HashSecret("iw_key-one"))
		if err != nil || cred.UserID != owner.ID || cred.APIKeyID != k1.ID || len(cred.Scopes) != 1 || cred.Scopes[0] != domain.ScopeWrite {
			t.Fatalf("Authenticate = %+v, %v; want owner %d, key %d, scopes [write] (the default)", cred, err, owner.ID, k1.ID)
		}
		list, _ = s.keys.List(ctx, owner.ID)
		if list[1].LastUsedAt == nil || list[0].LastUsedAt != nil {
			t.Fatalf("lastUsedAt after one use of k1: k1 %v, k2 %v", list[1].LastUsedAt, list[0].LastUsedAt)
		}
		first := *list[1].LastUsedAt
		// A second use within the minute writes nothing.
		if _, err := s.keys.Authenticate(ctx, domain.HashSecret("iw_key-one")); err != nil {
			t.Fatal(err)
		}
		list, _ = s.keys.List(ctx, owner.ID)
		if !list[1].LastUsedAt.Equal(first) {
			t.Fatalf("lastUsedAt moved within a minute: %v -> %v", first, *list[1].LastUsedAt)
		}

		stranger := createUser(t, s.users, userOpts{})
		if err := s.keys.Revoke(ctx, stranger.ID, k1.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("revoke someone else's key = %v, want ErrNotFound", err)
		}
		if err := s.keys.Revoke(ctx, owner.ID, k1.ID); err != nil {
			t.Fatalf("Revoke: %v", err)
		}
		if err := s.keys.Revoke(ctx, owner.ID, k1.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("revoke twice = %v, want ErrNotFound", err)
		}
		if _, err := s.keys.Authenticate(ctx, domain.HashSecret("iw_key-one")); !errors.Is(err, domain.ErrUnauthorized) {
			t.Fatalf("revoked key authenticates: %v", err)
		}
		if list, _ := s.keys.List(ctx, owner.ID); len(list) != 1 || list[0].ID != k2.ID {
			t.Fatalf("List after revoke = %+v", list)
		}
	})

	t.Run("an unknown key authenticates nobody", func(t *testing.T) {
		t.Parallel()
		if _, err := s.keys.Authenticate(ctx, domain.HashSecret("iw_never-issued")); !errors.Is(err, domain.ErrUnauthorized) {
			t.Fatalf("Authenticate = %v, want ErrUnauthorized", err)
		}
	})
}

// idemCall is one IdempotencyStore.Do outcome.
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
		together(n, func(i int) {
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
		store := repository.NewIdempotencyStore(pool, repository.NewQuerier(), 0)
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
