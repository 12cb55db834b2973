package testenv

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// GenericPlan prepares sql on a connection of its own (taken out of pool, so its settings and
// statement never reach the pool) and returns EXPLAIN of its generic plan, executed with args
// (e.g. "(1, 20)"): the plan a pooled, prepared statement settles on whatever its parameters.
func GenericPlan(t testing.TB, pool *pgxpool.Pool, sql, args string) string {
	t.Helper()
	ctx := t.Context()
	pooled, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pooled.Hijack()
	defer func() { _ = conn.Close(context.Background()) }()
	for _, s := range []string{"SET plan_cache_mode = force_generic_plan", "PREPARE generic_plan_query AS " + sql} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE generic_plan_query"+args, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}
