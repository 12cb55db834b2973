package pg

import "github.com/jackc/pgx/v5/pgxpool"

// PlanStatementsOnce makes a pool's sessions keep one generic plan per prepared statement
// (plan_cache_mode = force_generic_plan) instead of letting PostgreSQL plan a statement afresh
// for each call while it judges a generic plan dearer than a custom one. Only pools whose every
// statement has a plan that is good whatever its parameters get it: QueuePool and SearchPool,
// each with a test that holds its statements' generic plans to index scans.
func PlanStatementsOnce(c *pgxpool.Config) {
	c.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
}

// SearchPool is the connection pool article searches run on, apart from the API's pool because
// its sessions plan each statement once (PlanStatementsOnce): PostgreSQL re-planned the search
// statements on every call (their optional filters make a generic plan look dearer to it than it
// is), 0.3–0.4 ms each, three a search, about a fifth of a rare word's PostgreSQL time on the
// 1M-article seed (docs/BENCHMARKS.md). TestListQueries_GenericPlansWalkAnIndexAndStopAtThePage
// holds their generic plans to the window index, the keys and the page. A search holds a
// connection for one statement at a time.
type SearchPool struct{ *pgxpool.Pool }
