package repository

import "github.com/jackc/pgx/v5/pgxpool"

// SearchPool is the connection pool article searches run on. It is not the API's pool because
// its sessions plan differently (ConfigureSearchPool); a search holds a connection only for one
// statement at a time.
type SearchPool struct{ *pgxpool.Pool }

// ConfigureSearchPool makes the pool's sessions keep one generic plan per prepared statement.
// PostgreSQL otherwise planned the search statements afresh for every call (their optional
// filters make a generic plan look dearer to it than it is): 0.3–0.4 ms each, three a search,
// about a fifth of a rare word's PostgreSQL time on the 1M-article seed (docs/BENCHMARKS.md).
// The generic plans are the ones TestListQueries_GenericPlansWalkAnIndexAndStopAtThePage holds
// to the window index and the page.
func ConfigureSearchPool(c *pgxpool.Config) {
	c.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
}
