package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// newIdempotency is the idempotency path as the app wires it, over the database's store.
func newIdempotency(pool *pgxpool.Pool) *service.IdempotencyRunner {
	return service.NewIdempotencyRunner(pg.NewUnitOfWork(pool), durable.NewIdempotencyStore(pool, repository.NewQuerier()), 0)
}

// gatedHasher blocks each Hash until the test lets it go, so the test can look at the world while
// a password is being hashed.
type gatedHasher struct {
	plainHasher
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int64
}

func (h *gatedHasher) Hash(p string) (string, error) {
	h.calls.Add(1)
	h.entered <- struct{}{}
	<-h.release
	return h.plainHasher.Hash(p)
}

// TestRegisterIdempotent_HashesWithoutHoldingAConnection: a keyed signup hashes its password
// before its unit of work opens, so no database connection (nor the key's lock) waits on the
// hash; then the account and its stored answer commit together, and a retry is answered from the
// store without hashing again.
func TestRegisterIdempotent_HashesWithoutHoldingAConnection(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	log := testenv.Logger(t)
	q := repository.NewQuerier()
	users := repository.NewUserRepository(db.Pool, q,
		cache.NewUserCache(rds.Client, cache.Keyspace(rds.Prefix), cache.Policy{TTL: time.Minute, NullTTL: time.Second, LoadTimeout: 10 * time.Second}, log), log, nil)
	hasher := &gatedHasher{entered: make(chan struct{}), release: make(chan struct{})}
	svc := service.NewUserService(users, pg.NewUnitOfWork(db.Pool), hasher, userSessions{}, newIdempotency(db.Pool), noVerification{}, nil, log, time.Now, noUploads{})

	name := "gated" + testenv.RandomID(4)
	in := service.RegisterInput{Username: name, Email: name + "@example.com", Password: "correct horse battery"}
	idem := service.Idempotent[service.Session]{
		Key: service.IdempotencyKey{Scope: "ip:192.0.2.7", Key: "signup", RequestHash: "h"},
		Render: func(s service.Session, err error) domain.StoredResponse {
			if err != nil {
				return domain.StoredResponse{Status: http.StatusUnprocessableEntity, Body: []byte(`{"errors":{}}`)}
			}
			body, _ := json.Marshal(map[string]any{"username": s.User.Username, "token": s.Token})
			return domain.StoredResponse{Status: http.StatusCreated, Body: body}
		},
	}
	type result struct {
		res      domain.StoredResponse
		replayed bool
		err      error
	}
	done := make(chan result, 1)
	go func() {
		res, replayed, err := svc.RegisterIdempotent(context.Background(), in, idem)
		done <- result{res, replayed, err}
	}()

	select {
	case <-hasher.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the password was never hashed")
	}
	if n := db.Pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("%d connections held while the password is hashed, want 0", n)
	}
	close(hasher.release)
	first := <-done
	if first.err != nil || first.replayed || first.res.Status != http.StatusCreated {
		t.Fatalf("RegisterIdempotent = %d %s replayed=%v err=%v; want a fresh 201", first.res.Status, first.res.Body, first.replayed, first.err)
	}
	var n int64
	if err := db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM users WHERE username = $1`, name).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d users named %s (%v), want 1", n, name, err)
	}

	again, replayed, err := svc.RegisterIdempotent(context.Background(), in, idem)
	if err != nil || !replayed || string(again.Body) != string(first.res.Body) {
		t.Fatalf("retry = %s replayed=%v err=%v; want the first answer replayed", again.Body, replayed, err)
	}
	if c := hasher.calls.Load(); c != 1 {
		t.Fatalf("the password was hashed %d times, want once: a replay needs no hash", c)
	}
}

// countingSessions starts sessions whose tokens are new each time.
type countingSessions struct {
	userSessions
	n atomic.Int64
}

func (s *countingSessions) Start(_ context.Context, userID int64) (domain.Tokens, error) {
	n := s.n.Add(1)
	return domain.Tokens{Access: fmt.Sprintf("access-%d-%d", userID, n), Refresh: fmt.Sprintf("refresh-%d-%d", userID, n)}, nil
}
func (s *countingSessions) StartIn(ctx context.Context, _ service.Tx, userID int64) (domain.Tokens, error) {
	return s.Start(ctx, userID)
}

// TestRegisterIdempotent_StoresNoToken: the stored answer of a keyed signup is rendered without
// tokens and names the account; the first answer carries the session started with the account, a
// replay a session of its own (a login with the registration's password), and a replay after the
// password changed is refused as a wrong login would be.
func TestRegisterIdempotent_StoresNoToken(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	log := testenv.Logger(t)
	q := repository.NewQuerier()
	users := repository.NewUserRepository(db.Pool, q,
		cache.NewUserCache(rds.Client, cache.Keyspace(rds.Prefix), cache.Policy{TTL: time.Minute, NullTTL: time.Second, LoadTimeout: 10 * time.Second}, log), log, nil)
	sessions := &countingSessions{}
	svc := service.NewUserService(users, pg.NewUnitOfWork(db.Pool), plainHasher{}, sessions, newIdempotency(db.Pool), noVerification{}, nil, log, time.Now, noUploads{})

	name := "tokenless" + testenv.RandomID(4)
	in := service.RegisterInput{Username: name, Email: name + "@example.com", Password: "correct horse battery"}
	idem := service.Idempotent[service.Session]{
		Key: service.IdempotencyKey{Scope: "ip:192.0.2.8", Key: "signup", RequestHash: "h"},
		Render: func(s service.Session, err error) domain.StoredResponse {
			if err != nil {
				return domain.StoredResponse{Status: http.StatusUnauthorized, Body: []byte(`{"errors":{"credentials":["invalid"]}}`)}
			}
			body, _ := json.Marshal(map[string]any{"username": s.User.Username, "token": s.Token, "refreshToken": s.Refresh})
			return domain.StoredResponse{Status: http.StatusCreated, Body: body}
		},
	}
	bodyOf := func(res domain.StoredResponse) map[string]string {
		var m map[string]string
		if err := json.Unmarshal(res.Body, &m); err != nil {
			t.Fatalf("answer %s: %v", res.Body, err)
		}
		return m
	}

	first, replayed, err := svc.RegisterIdempotent(t.Context(), in, idem)
	if err != nil || replayed || first.Status != http.StatusCreated {
		t.Fatalf("RegisterIdempotent = %d %s replayed=%v err=%v; want a fresh 201", first.Status, first.Body, replayed, err)
	}
	u, err := users.GetByEmail(t.Context(), in.Email)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bodyOf(first), fmt.Sprintf("access-%d-1", u.ID); got["token"] != want || got["refreshToken"] == "" {
		t.Fatalf("first answer %s, want the session started with the account (%s)", first.Body, want)
	}
	var stored []byte
	var sessionFor int64
	if err := db.Pool.QueryRow(t.Context(), `SELECT response_body, session_user_id FROM idempotency_keys WHERE key = 'signup'`).Scan(&stored, &sessionFor); err != nil {
		t.Fatal(err)
	}
	if m := bodyOf(domain.StoredResponse{Body: stored}); m["token"] != "" || m["refreshToken"] != "" || m["username"] != name || sessionFor != u.ID {
		t.Fatalf("stored %s for user %d; want no token, for user %d", stored, sessionFor, u.ID)
	}

	again, replayed, err := svc.RegisterIdempotent(t.Context(), in, idem)
	if err != nil || !replayed || again.Status != http.StatusCreated {
		t.Fatalf("replay = %d %s replayed=%v err=%v", again.Status, again.Body, replayed, err)
	}
	if got, want := bodyOf(again), fmt.Sprintf("access-%d-2", u.ID); got["token"] != want || got["username"] != name {
		t.Fatalf("replay answered %s, want a new session (%s)", again.Body, want)
	}

	if err := users.ReplacePasswordHash(t.Context(), u.ID, u.PasswordHash, "plain:another password"); err != nil {
		t.Fatal(err)
	}
	refused, replayed, err := svc.RegisterIdempotent(t.Context(), in, idem)
	if err != nil || !replayed || refused.Status != http.StatusUnauthorized {
		t.Fatalf("replay after a password change = %d %s replayed=%v err=%v; want a replayed 401", refused.Status, refused.Body, replayed, err)
	}
	if n := sessions.n.Load(); n != 2 {
		t.Fatalf("%d sessions started, want 2", n)
	}
}
