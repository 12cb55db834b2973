package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/session"
)

// These tests run against the real PostgreSQL (TEST_DATABASE_URL). Each top-level test migrates a
// database of its own; its subtests share it, with users whose names no other subtest uses.

// safetyEnv is the repositories of sessions and API keys on one database, wired as the app wires
// them (one sqlc handle, the calls naming their connection).
type safetyEnv struct {
	pool     *pgxpool.Pool
	users    accounts
	sessions *session.SessionRepository
	keys     *session.APIKeyRepository
}

func setupSafety(t *testing.T, db *testenv.DB) safetyEnv {
	t.Helper()
	// A pool of its own, larger than the default of max(4, CPUs): parallel subtests hold
	// transactions open while others need connections.
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
	q := dao.New()
	return safetyEnv{
		pool:     pool,
		users:    accounts{pool: pool, q: q},
		sessions: session.NewSessionRepository(pool, q),
		keys:     session.NewAPIKeyRepository(pool, q),
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

// accounts makes the users sessions belong to, with the generated insert: this room does not
// import the core repository, and the sessions' tests need nothing of a user but its row.
type accounts struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// userOpts describe a user to create; the session tests need no field of their choosing.
type userOpts struct{}

func createUser(t *testing.T, a accounts, _ userOpts) domain.User {
	t.Helper()
	name := uniqueName("user")
	email := strings.ToLower(name) + "@example.com"
	row, err := a.q.UserInsert(t.Context(), a.pool, dao.UserInsertParams{
		Email: email, EmailCanonical: email, Username: name, PasswordHash: "$argon2id$v=19$m=65536,t=1,p=4$" + testenv.RandomID(8),
	})
	if err != nil {
		t.Fatalf("create user %q: %v", name, err)
	}
	return domain.User{ID: row.ID, Email: row.Email, Username: row.Username, PasswordHash: row.PasswordHash}
}

// uniqueName returns a username no other test uses.
func uniqueName(base string) string { return base + "_" + testenv.RandomID(5) }
