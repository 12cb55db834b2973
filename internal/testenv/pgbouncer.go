package testenv

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// PgBouncerURL is the PgBouncer (transaction pooling) in front of the replica pair's primary
// (scripts/services.sh pgbouncer; make test starts it): TEST_PGBOUNCER_URL, else port 6432.
func PgBouncerURL() string {
	if v := os.Getenv("TEST_PGBOUNCER_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:6432/postgres?sslmode=disable"
}

// PooledURL is db (a database of the replica pair's primary) reached through PgBouncer.
func PooledURL(t testing.TB, db *ReplicatedDB) string {
	t.Helper()
	return withDatabase(t, PgBouncerURL(), db.Name)
}

// PgBouncerConnections is how many connections PgBouncer holds for the database named name, of
// its clients (SHOW CLIENTS) and to the server (SHOW SERVERS), from its admin console. It fails
// the test, saying how to start PgBouncer, when it does not answer.
func PgBouncerConnections(t testing.TB, name string) (clients, servers int) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(withDatabase(t, PgBouncerURL(), "pgbouncer"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol // the admin console speaks no other
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to PgBouncer's admin console at TEST_PGBOUNCER_URL=%s: %v (run `scripts/services.sh pgbouncer`, which make test runs)", PgBouncerURL(), err)
	}
	defer conn.Close(ctx)
	count := func(show string) int {
		rows, err := conn.Query(ctx, show)
		if err != nil {
			t.Fatalf("PgBouncer's %s: %v", show, err)
		}
		defer rows.Close()
		column := -1
		for i, f := range rows.FieldDescriptions() {
			if f.Name == "database" {
				column = i
			}
		}
		n := 0
		for rows.Next() {
			values, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			if db, _ := values[column].(string); column >= 0 && db == name {
				n++
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return count("SHOW CLIENTS"), count("SHOW SERVERS")
}
