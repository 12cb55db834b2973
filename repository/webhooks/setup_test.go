package webhooks_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/webhooks"
)

// These tests run against the real PostgreSQL (TEST_DATABASE_URL), each top-level test on a
// database of its own.

type env struct {
	pool  *pgxpool.Pool
	store *webhooks.Store
}

func setup(t testing.TB) *env {
	t.Helper()
	db := testenv.NewDB(t)
	q := dao.New()
	return &env{pool: db.Pool, store: webhooks.NewStore(db.Pool, q, durable.NewJobQueue(durable.QueuePool{Pool: db.Pool}, q))}
}

// user inserts an account and returns its id.
func (e *env) user(t *testing.T) int64 {
	t.Helper()
	name := "user_" + testenv.RandomID(6)
	var id int64
	if err := e.pool.QueryRow(t.Context(), `INSERT INTO users (email, username, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
		name+"@example.com", name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// jobs returns the delivery ids of the webhook queue's jobs, oldest first.
func (e *env) jobs(t *testing.T) []int64 {
	t.Helper()
	rows, err := e.pool.Query(t.Context(), `SELECT (payload->>'delivery')::bigint FROM jobs WHERE queue = 'webhooks' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// emit makes an event of topic for owner's endpoints (and the site's) the way the writes'
// triggers do (webhook_emit, migration 00038), with data {}, and returns how many deliveries it added.
func (e *env) emit(t *testing.T, topic string, owner int64, eventID string) int {
	t.Helper()
	count := func() (n int) {
		if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM webhook_deliveries WHERE event_id = $1`, eventID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	if _, err := e.pool.Exec(t.Context(), `SELECT webhook_emit($1, $2, $3, '{}'::json, NULL)`, topic, owner, eventID); err != nil {
		t.Fatal(err)
	}
	return count() - before
}
