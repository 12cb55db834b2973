package pg

import "github.com/jackc/pgx/v5/pgxpool"

// PlanStatementsOnce makes a pool's sessions keep one generic plan per prepared statement
// (plan_cache_mode = force_generic_plan) instead of letting PostgreSQL plan a statement afresh
// for each call while it judges a generic plan dearer than a custom one. Only pools whose every
// statement has a plan that is good whatever its parameters get it: QueuePool and search.Pool,
// each with a test that holds its statements' generic plans to index scans.
func PlanStatementsOnce(c *pgxpool.Config) {
	c.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
}

// SessionPool is a pool of connections to PostgreSQL itself, never through a transaction
// pooler: what needs a session of its own across statements takes its connections from it
// (LISTEN, and the session-level advisory locks of the retention and lexicon passes). Without
// DATABASE_POOLER it is the app's pool; with DATABASE_POOLER=pgbouncer a small pool at
// DATABASE_DIRECT_URL, because PgBouncer in transaction mode hands each transaction whichever
// server connection is free, and a LISTEN or a session lock would stay behind on one that another
// client then gets.
type SessionPool struct{ *pgxpool.Pool }
