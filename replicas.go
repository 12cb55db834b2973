package inkwell

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/web"
)

// writeMarkMargin is how much longer than the replicas' lag bound a user's write mark is kept:
// a few of the router's polls, so a replica that has just re-entered the rotation cannot serve a
// reader whose mark already expired.
const writeMarkMargin = time.Second

// replicaPoolConns is each replica pool's size, as the primary's request pool.
const replicaPoolConns = 20

// NewReadRouter opens the read replicas of DATABASE_REPLICA_URLS and routes reads over them
// (repository/pg.ReadRouter), polling their positions until the cleanup; with no replica it
// routes every read to the primary and polls nothing.
func NewReadRouter(cfg *ioc.Config, primary *pgxpool.Pool, rdb redis.UniversalClient, ks cache.Keyspace, now func() time.Time,
	tracing *ioc.Tracing, log *slog.Logger) (*pg.ReadRouter, func(), error) {
	pools, names, closePools, err := ioc.OpenReplicaPools(cfg, "", replicaPoolConns, tracing.TracePostgres, log)
	if err != nil {
		return nil, nil, err
	}
	replicas := make([]pg.Replica, len(pools))
	for i := range pools {
		replicas[i] = pg.Replica{Name: names[i], Pool: pools[i]}
	}
	marks := cache.NewWriteMarks(rdb, ks, cfg.Database.ReplicaMaxLag+writeMarkMargin, now)
	router := pg.NewReadRouter(primary, replicas, marks, cfg.Database.ReplicaMaxLag, now, log)
	if !router.Enabled() {
		return router, closePools, nil
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { router.Run(ctx) })
	log.Info("read replicas in use", "replicas", len(replicas), "max_lag", cfg.Database.ReplicaMaxLag)
	return router, func() { stop(); wg.Wait(); closePools() }, nil
}

// NewSearchReplicas opens on each read replica a pool like the search pool (its sessions plan
// each statement once: NewSearchPgPool) and routes searches over them with the read router,
// falling back to pool; with no replica it opens nothing and every search runs on pool.
func NewSearchReplicas(cfg *ioc.Config, router *pg.ReadRouter, pool search.Pool, tracing *ioc.Tracing, log *slog.Logger) (search.Replicas, func(), error) {
	if !router.Enabled() {
		return search.Replicas{}, func() {}, nil
	}
	configure := func(c *pgxpool.Config) { pg.PlanStatementsOnce(c); tracing.TracePostgres(c) }
	pools, _, closePools, err := ioc.OpenReplicaPools(cfg, "search pool", searchPoolConns(), configure, log)
	if err != nil {
		return search.Replicas{}, nil, err
	}
	return search.Replicas{Lane: router.Lane(pool.Pool, pools)}, closePools, nil
}

// NewWriteRecorder is the router when replicas are in use; nil otherwise, so the HTTP layer adds
// nothing to a request.
func NewWriteRecorder(r *pg.ReadRouter) web.WriteRecorder {
	if !r.Enabled() {
		return nil
	}
	return r
}
