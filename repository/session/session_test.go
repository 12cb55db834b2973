package session_test

import (
	"errors"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/service"
)

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
		testenv.Together(n, func(i int) {
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
