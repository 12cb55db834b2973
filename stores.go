package inkwell

import (
	"log/slog"
	"runtime"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// NewSearchPgPool opens the article searches' own pool (search.Pool), on PostgreSQL itself (its
// sessions carry plan_cache_mode, which a transaction pooler would not keep): a
// search holds one connection for one statement at a time and is CPU work in PostgreSQL, so a
// connection per core (at least 4, at most 16) keeps the cores busy without queueing more
// searches inside PostgreSQL than it can run.
func NewSearchPgPool(cfg *ioc.Config, tracing *ioc.Tracing, log *slog.Logger) (search.Pool, func(), error) {
	configure := func(c *pgxpool.Config) { pg.PlanStatementsOnce(c); tracing.TracePostgres(c) }
	pool, cleanup, err := ioc.OpenPgPool(cfg, "search pool", searchPoolConns(), configure, log)
	return search.Pool{Pool: pool}, cleanup, err
}

// searchPoolConns is the size of the search pool and of each replica's search pool.
func searchPoolConns() int32 { return int32(min(max(runtime.NumCPU(), 4), 16)) }

// NewQueuePgPool opens the job queue's own pool, on PostgreSQL itself (it holds a LISTEN and its
// sessions carry plan_cache_mode): one connection held in LISTEN, one for the
// runner's cycle, one for the reaper, and one for every four job slots' lease renewals and
// failures (each slot renews every third of a lease and fails rarely; a busy pool only makes
// them wait a moment). With tracing on, its statements are spans of the job that runs them.
func NewQueuePgPool(cfg *ioc.Config, tracing *ioc.Tracing, log *slog.Logger) (durable.QueuePool, func(), error) {
	maxConns := int32(3 + (job.QueueConcurrency+3)/4)
	configure := func(c *pgxpool.Config) { pg.PlanStatementsOnce(c); tracing.TracePostgres(c) }
	pool, cleanup, err := ioc.OpenPgPool(cfg, "job queue pool", maxConns, configure, log)
	return durable.QueuePool{Pool: pool}, cleanup, err
}

// NewSessionPgPool is the pool of what needs a session of its own (pg.SessionPool: the outbox's
// LISTEN, the retention and lexicon passes' session locks). Without DATABASE_POOLER it is the
// app's pool; with it a pool at DATABASE_DIRECT_URL of one connection for the LISTEN, one for
// each pass's lock and two for their statements.
func NewSessionPgPool(cfg *ioc.Config, pool *pgxpool.Pool, tracing *ioc.Tracing, log *slog.Logger) (pg.SessionPool, func(), error) {
	if !cfg.Database.Pooled() {
		return pg.SessionPool{Pool: pool}, func() {}, nil
	}
	direct, cleanup, err := ioc.OpenPgPool(cfg, "session pool", 5, tracing.TracePostgres, log)
	return pg.SessionPool{Pool: direct}, cleanup, err
}
