package search

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/repository/pg"
)

// Pool is the connection pool article searches run on, apart from the API's pool because its
// sessions plan each statement once (pg.PlanStatementsOnce): PostgreSQL re-planned the search
// statements on every call (their optional filters make a generic plan look dearer to it than it
// is), 0.3–0.4 ms each, three a search, about a fifth of a rare word's PostgreSQL time on the
// 1M-article seed (docs/BENCHMARKS.md). TestListQueries_GenericPlansWalkAnIndexAndStopAtThePage
// holds their generic plans to the window index, the keys and the page. A search holds a
// connection for one statement at a time.
type Pool struct{ *pgxpool.Pool }

// Replicas is where a search runs when read replicas are in use: a replica's search pool that
// has replayed what the reader must see, else Pool (a pg.Lane of the read router). Its zero value
// runs every search on Pool.
type Replicas struct{ *pg.Lane }
