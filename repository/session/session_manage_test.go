package session_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

func TestSessionRepository_Manage(t *testing.T) {
	t.Parallel()
	s := setupSafety(t, testenv.NewDB(t))
	ctx := t.Context()

	t.Run("list shows live sessions with their client and last use", func(t *testing.T) {
		t.Parallel()
		a := createSession(t, s, sessionOpts{})
		owner := domain.User{ID: a.UserID}
		b := createSession(t, s, sessionOpts{User: owner})
		expired := createSession(t, s, sessionOpts{User: owner, Expires: time.Now().Add(-time.Minute)})
		gone := createSession(t, s, sessionOpts{User: owner})
		if err := s.sessions.Revoke(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		createSession(t, s, sessionOpts{}) // someone else's
		now := time.Now()
		if _, _, _, err := s.sessions.Rotate(ctx, domain.HashSecret(b.Refresh), domain.HashSecret("next-"+b.ID), now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}

		list, err := s.sessions.ListLive(ctx, owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
			t.Fatalf("ListLive = %+v; want b (refreshed) then a, without %s (expired) and %s (revoked)", list, expired.ID, gone.ID)
		}
		if list[0].LastUsedAt == nil || list[1].LastUsedAt != nil {
			t.Fatalf("last use: refreshed %v, never refreshed %v", list[0].LastUsedAt, list[1].LastUsedAt)
		}
		if list[0].UserAgent != "test-agent" || list[0].CreatedAt.IsZero() {
			t.Fatalf("session %+v: want its user agent and creation time", list[0])
		}
	})

	start := func(t *testing.T, userID int64, keep int) (string, []string) {
		t.Helper()
		sid := domain.NewSessionID()
		ended, err := s.sessions.Create(ctx, sid, userID, "test-agent", domain.HashSecret(sid), time.Now().Add(time.Hour), keep)
		if err != nil {
			t.Fatalf("create session: %v", err)
		}
		return sid, ended
	}

	t.Run("a start past the cap ends the least recently used session", func(t *testing.T) {
		t.Parallel()
		a := createSession(t, s, sessionOpts{})
		owner := domain.User{ID: a.UserID}
		b := createSession(t, s, sessionOpts{User: owner})
		c := createSession(t, s, sessionOpts{User: owner})
		stranger := createSession(t, s, sessionOpts{})
		now := time.Now()
		if _, _, _, err := s.sessions.Rotate(ctx, domain.HashSecret(a.Refresh), domain.HashSecret("next-"+a.ID), now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
		d, ended := start(t, owner.ID, 3)
		if len(ended) != 1 || ended[0] != b.ID {
			t.Fatalf("ended %v, want [%s] (the oldest never refreshed; %s was refreshed)", ended, b.ID, a.ID)
		}
		list, err := s.sessions.ListLive(ctx, owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 || list[0].ID != d || list[1].ID != a.ID || list[2].ID != c.ID {
			t.Fatalf("ListLive = %+v, want d, a (refreshed), c", list)
		}
		if !s.isRevoked(t, b.ID) || s.isRevoked(t, stranger.ID) {
			t.Fatal("the ended session is not revoked, or another user's is")
		}
		if _, ended := start(t, owner.ID, 4); len(ended) != 0 {
			t.Fatalf("a start under the cap ended %v", ended)
		}
	})

	t.Run("concurrent starts at the cap keep exactly the cap", func(t *testing.T) {
		t.Parallel()
		owner := createUser(t, s.users, userOpts{})
		const keep, starts = 3, 12
		created, ended, errs := make([]string, starts), make([][]string, starts), make([]error, starts)
		begin := make(chan struct{})
		var wg sync.WaitGroup
		for i := range starts {
			created[i] = domain.NewSessionID()
			wg.Go(func() {
				<-begin
				ended[i], errs[i] = s.sessions.Create(ctx, created[i], owner.ID, "test-agent", domain.HashSecret(created[i]), time.Now().Add(time.Hour), keep)
			})
		}
		close(begin)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		endedOnce := map[string]int{}
		for _, ids := range ended {
			for _, id := range ids {
				endedOnce[id]++
			}
		}
		if len(endedOnce) != starts-keep {
			t.Fatalf("%d sessions ended, want %d", len(endedOnce), starts-keep)
		}
		for id, n := range endedOnce {
			if n != 1 || !slices.Contains(created, id) {
				t.Fatalf("session %s ended %d times (or is not one of the starts)", id, n)
			}
		}
		if n := s.count(t, "SELECT count(*) FROM sessions WHERE user_id = $1 AND revoked_at IS NULL", owner.ID); n != keep {
			t.Fatalf("%d live sessions, want %d", n, keep)
		}
	})

	t.Run("revoking a session checks its owner", func(t *testing.T) {
		t.Parallel()
		mine := createSession(t, s, sessionOpts{})
		theirs := createSession(t, s, sessionOpts{})
		if err := s.sessions.RevokeOwned(ctx, mine.UserID, theirs.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("revoke another user's session = %v, want ErrNotFound", err)
		}
		if s.isRevoked(t, theirs.ID) {
			t.Fatal("another user's session was revoked")
		}
		if err := s.sessions.RevokeOwned(ctx, mine.UserID, mine.ID); err != nil {
			t.Fatal(err)
		}
		if !s.isRevoked(t, mine.ID) {
			t.Fatal("own session not revoked")
		}
		if err := s.sessions.RevokeOwned(ctx, mine.UserID, mine.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("revoke twice = %v, want ErrNotFound", err)
		}
	})

	t.Run("revoke all ends every session but the kept one, and only the user's", func(t *testing.T) {
		t.Parallel()
		keep := createSession(t, s, sessionOpts{})
		owner := domain.User{ID: keep.UserID}
		var others []string
		for range 3 {
			others = append(others, createSession(t, s, sessionOpts{User: owner}).ID)
		}
		stranger := createSession(t, s, sessionOpts{})
		var ended []string
		err := pg.NewUnitOfWork(s.pool).InTx(ctx, func(stx service.Tx) error {
			tx := pg.TxOf(stx)
			var err error
			ended, err = s.sessions.RevokeAllIn(ctx, tx, owner.ID, keep.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(ended) != len(others) {
			t.Fatalf("ended %v, want %v", ended, others)
		}
		for _, id := range others {
			if !s.isRevoked(t, id) {
				t.Fatalf("session %s survived", id)
			}
		}
		if s.isRevoked(t, keep.ID) || s.isRevoked(t, stranger.ID) {
			t.Fatal("the kept session or another user's was revoked")
		}
		all, err := s.sessions.RevokeAll(ctx, owner.ID)
		if err != nil || len(all) != 1 || all[0] != keep.ID {
			t.Fatalf("RevokeAll = %v, %v; want the kept session only", all, err)
		}
	})
}

func TestAPIKeyRepository_Manage(t *testing.T) {
	t.Parallel()
	s := setupSafety(t, testenv.NewDB(t))
	ctx := t.Context()

	t.Run("the cap holds under concurrent creates", func(t *testing.T) {
		t.Parallel()
		owner := createUser(t, s.users, userOpts{})
		const attempts = 50
		var wg sync.WaitGroup
		errs := make(chan error, attempts)
		for i := range attempts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Sprintf("iw_race-%d-%d", owner.ID, i)
				_, err := s.keys.Create(ctx, owner.ID, "k", "iw_race", domain.HashSecret(key), nil, service.MaxAPIKeys)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		created, refused := 0, 0
		for err := range errs {
			switch {
			case err == nil:
				created++
			case errors.Is(err, domain.ErrAPIKeyLimit):
				refused++
			default:
				t.Errorf("create: %v", err)
			}
		}
		if created != service.MaxAPIKeys || refused != attempts-service.MaxAPIKeys {
			t.Fatalf("created %d, refused %d; want %d and %d", created, refused, service.MaxAPIKeys, attempts-service.MaxAPIKeys)
		}
		if n := s.count(t, "SELECT count(*) FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL", owner.ID); n != service.MaxAPIKeys {
			t.Fatalf("%d live keys, want %d", n, service.MaxAPIKeys)
		}
	})

	t.Run("scopes are stored with the key", func(t *testing.T) {
		t.Parallel()
		owner := createUser(t, s.users, userOpts{})
		k, err := s.keys.Create(ctx, owner.ID, "reader", "iw_read", domain.HashSecret("iw_reader-"+owner.Username), []domain.Scope{domain.ScopeRead}, service.MaxAPIKeys)
		if err != nil || len(k.Scopes) != 1 || k.Scopes[0] != domain.ScopeRead {
			t.Fatalf("Create = %+v, %v; want scopes [read]", k, err)
		}
		cred, err := s.keys.Authenticate(ctx, domain.HashSecret("iw_reader-"+owner.Username))
		if err != nil || cred.CanWrite() || !cred.IsAPIKey() {
			t.Fatalf("Authenticate = %+v, %v; want a read-only key", cred, err)
		}
	})

	t.Run("revoke all ends every key of the user", func(t *testing.T) {
		t.Parallel()
		owner := createUser(t, s.users, userOpts{})
		other := createUser(t, s.users, userOpts{})
		for i, u := range []domain.User{owner, owner, other} {
			if _, err := s.keys.Create(ctx, u.ID, "k", "iw_all", domain.HashSecret(fmt.Sprintf("iw_all-%d-%d", owner.ID, i)), nil, service.MaxAPIKeys); err != nil {
				t.Fatal(err)
			}
		}
		err := pg.NewUnitOfWork(s.pool).InTx(ctx, func(tx service.Tx) error { return s.keys.RevokeAllIn(ctx, tx, owner.ID) })
		if err != nil {
			t.Fatal(err)
		}
		if mine, _ := s.keys.List(ctx, owner.ID); len(mine) != 0 {
			t.Fatalf("keys left: %+v", mine)
		}
		if theirs, _ := s.keys.List(ctx, other.ID); len(theirs) != 1 {
			t.Fatalf("another user's keys: %+v", theirs)
		}
	})
}
