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
