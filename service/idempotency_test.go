package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/service"
)

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
	q := dao.New()
	users := repository.NewUserRepository(db.Pool, q,
		cache.NewUserCache(rds.Client, cache.Keyspace(rds.Prefix), cache.Policy{TTL: time.Minute, NullTTL: time.Second, LoadTimeout: 10 * time.Second}, log), log)
	hasher := &gatedHasher{entered: make(chan struct{}), release: make(chan struct{})}
	svc := service.NewUserService(users, hasher, userSessions{}, repository.NewIdempotencyStore(db.Pool, q), noVerification{}, log)

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
