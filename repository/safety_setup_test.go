package repository_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/session"
	"github.com/inkwell-dev/inkwell/service"
)

// safetyEnv is the repositories of sessions, API keys and idempotency keys on one database, wired
// as the app wires them: single statements go through repository.NewQuerier, so they join a
// transaction carried by the context.
type safetyEnv struct {
	pool     *pgxpool.Pool
	users    *repository.UserRepository
	sessions *session.SessionRepository
	keys     *session.APIKeyRepository
	idem     *service.IdempotencyRunner
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
		users:    repository.NewUserRepository(pool, q, uc, log, nil),
		sessions: session.NewSessionRepository(pool, q),
		keys:     session.NewAPIKeyRepository(pool, q),
		idem:     service.NewIdempotencyRunner(pg.NewUnitOfWork(pool), durable.NewIdempotencyStore(pool, q), 0),
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
