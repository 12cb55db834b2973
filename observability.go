package inkwell

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/metrics"
	"github.com/inkwell-dev/inkwell/migrations"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/mediastore"
	"github.com/inkwell-dev/inkwell/repository/moderation"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
)

// MetricSources is what only the composition root holds: the components whose counters and
// statistics the metric catalogue (metrics/catalogue_*.go) exposes. wire fills every field.
type MetricSources struct {
	Pool         *pgxpool.Pool
	QueuePool    durable.QueuePool
	SearchPool   search.Pool
	Redis        redis.UniversalClient
	Breaker      *cache.Breaker
	Broadcaster  *cache.Broadcaster
	Users        *cache.UserCache
	Articles     *cache.ArticleCache
	Viewers      *cache.ViewerState
	Revocations  *cache.Revocations
	Fallback     *cache.FallbackLimit
	Repair       *cache.Repairer
	Workers      Workers
	Rank         *job.RankJob
	Retention    *job.RetentionJob
	Queue        *durable.JobQueue
	Outbox       *durable.Outbox
	Idempotency  *service.IdempotencyRunner
	Sessions     *service.SessionService
	ReadStream   ReadStream
	OutboxStream OutboxStream
	Moderation   *service.ModerationStats
	ReportQueue  *moderation.Cases
	Reads        *pg.ReadRouter
}

// NewMetricsHandler binds every metric of the catalogue to the value it reads, on the Prometheus
// registry (which also records the HTTP requests), and serves them at GET /metrics.
func NewMetricsHandler(m *metrics.Registry, src MetricSources) http.Handler {
	exposeCaches(m, src)
	for _, w := range src.Workers {
		exposeWorker(m, w)
	}
	exposeSessions(m, src.Sessions, src.Revocations)
	exposeRanking(m, src.Rank)
	exposeRetention(m, src.Retention)
	for outcome, v := range map[string]*atomic.Int64{"executed": &src.Idempotency.Stats.Executed, "replayed": &src.Idempotency.Stats.Replayed,
		"mismatch": &src.Idempotency.Stats.Mismatched, "in_flight": &src.Idempotency.Stats.InFlight, "commit_unknown": &src.Idempotency.Stats.CommitUnknown} {
		m.Count(metrics.IdempotencyRequests, v, outcome)
	}
	exposePools(m, src)
	exposeFleetGauges(m, src)
	exposeModeration(m, src.Moderation, src.ReportQueue)
	return m.Handler()
}

func exposeCaches(m *metrics.Registry, src MetricSources) {
	for name, st := range map[string]*cache.Stats{"user": src.Users.Stats(), "article": src.Articles.Stats(), "viewer": &src.Viewers.Stats} {
		m.Count(metrics.CacheHits, &st.Hits, name)
		m.Count(metrics.CacheMisses, &st.Misses, name)
		m.Count(metrics.CacheLocalHits, &st.LocalHits, name)
		m.Count(metrics.CacheNullHits, &st.NullHits, name)
		m.Count(metrics.CacheFallbacks, &st.Fallbacks, name)
		m.Count(metrics.CacheLoads, &st.Loads, name)
		m.Count(metrics.SingleflightShared, &st.SharedLoads, name)
	}
	m.Count(metrics.CacheFallbackRefused, &src.Fallback.Refused)
	m.Gauge(metrics.CacheFallbackInUse, func() float64 { return float64(src.Fallback.InUse.Load()) })
	bcast, repair := src.Broadcaster, src.Repair
	m.Gauge(metrics.CacheInvalidationSubscribed, func() float64 { return metrics.Bool(bcast.Subscribed()) })
	m.Count(metrics.CacheInvalidationsPublished, &bcast.Stats.Published)
	m.Count(metrics.CacheInvalidationPublishFailures, &bcast.Stats.PublishFailed)
	m.Count(metrics.CacheInvalidationsReceived, &bcast.Stats.Received)
	m.Count(metrics.CacheInvalidationSubscriptionLosses, &bcast.Stats.Losses)
	m.Gauge(metrics.CacheInvalidationRepairsPending, func() float64 { return float64(repair.Stats.Pending.Load()) })
	m.Count(metrics.CacheInvalidationRepairFailures, &repair.Stats.Failures)
	m.Gauge(metrics.RedisBreakerOpen, func() float64 { return metrics.Bool(src.Breaker.Open()) })
	m.Count(metrics.RedisBreakerRejected, &src.Breaker.Rejected)
}

// exposeWorker exposes the counters of the background workers that keep some.
func exposeWorker(m *metrics.Registry, w Worker) {
	switch w := w.(type) {
	case *events.Publisher:
		m.Count(metrics.ReadEventsPublished, &w.Stats.Published)
		m.Count(metrics.ReadEventsDropped, &w.Stats.Dropped)
		m.Count(metrics.ReadEventsFailed, &w.Stats.Failed)
	case *events.ReadAggregator:
		m.Count(metrics.AnonymousReadsBatched, &w.Stats.Counted)
		m.Count(metrics.AnonymousReadsSent, &w.Stats.Sent)
		m.Count(metrics.AnonymousReadBatches, &w.Stats.Batches)
		m.Count(metrics.AnonymousReadBatchesRetried, &w.Stats.Retried)
		m.Count(metrics.AnonymousReadsLost, &w.Stats.Lost)
	case *events.Consumer:
		g := w.Group()
		m.Count(metrics.StreamBatches, &w.Stats.Batches, g)
		m.Count(metrics.StreamEntries, &w.Stats.Entries, g)
		m.Count(metrics.StreamReclaimed, &w.Stats.Reclaimed, g)
		m.Count(metrics.StreamFailures, &w.Stats.Failures, g)
		m.Count(metrics.StreamDeadLettered, &w.Stats.DeadLettered, g)
	case *job.Runner:
		q := w.Queue()
		m.Count(metrics.JobAttempts, &w.Stats.Claimed, q)
		m.Count(metrics.JobsDone, &w.Stats.Done, q)
		m.Count(metrics.JobsRetried, &w.Stats.Retried, q)
		m.Count(metrics.JobsDead, &w.Stats.Dead, q)
		m.Count(metrics.JobsLostLeases, &w.Stats.LostLeases, q)
	case *job.Relay:
		m.Count(metrics.OutboxRelayed, &w.Stats.Published)
		m.Count(metrics.OutboxRedriven, &w.Stats.Redriven)
		m.Count(metrics.OutboxDied, &w.Stats.Dead)
	case *job.Preloader:
		m.Count(metrics.Preloads, &w.Stats.Done)
		m.Count(metrics.PreloadsDropped, &w.Stats.Dropped)
	case *job.RevocationRenewer:
		m.Count(metrics.RevocationLeaseRenewals, &w.Stats.Renewed)
		m.Count(metrics.RevocationLeaseFailures, &w.Stats.Failed)
		m.Gauge(metrics.RevocationLeaseFailing, func() float64 { return metrics.Bool(w.Stats.Failing.Load()) })
	}
}

func exposeSessions(m *metrics.Registry, sessions *service.SessionService, revocations *cache.Revocations) {
	m.Count(metrics.SessionPostgresChecks, &sessions.Stats.PostgresChecks)
	m.Count(metrics.RevocationMemoryHits, &revocations.Stats.MemoryHits)
	m.Count(metrics.RevocationsUnconfirmed, &revocations.Stats.Unconfirmed)
	m.Count(metrics.RevocationsDelayed, &sessions.Stats.RevocationsDelayed)
	m.Count(metrics.RevocationsUnmarked, &sessions.Stats.RevocationsUnmarked)
}

func exposeRanking(m *metrics.Registry, rank *job.RankJob) {
	m.Count(metrics.RankRuns, &rank.Metrics.Success, string(job.OutcomeSuccess))
	m.Count(metrics.RankRuns, &rank.Metrics.Failure, string(job.OutcomeFailure))
	m.Count(metrics.RankRuns, &rank.Metrics.NotLeader, string(job.OutcomeNotLeader))
	m.Gauge(metrics.RankLastDuration, func() float64 { return time.Duration(rank.Metrics.LastDurationNanos.Load()).Seconds() })
	m.Gauge(metrics.RankLockHeld, func() float64 { return metrics.Bool(rank.Leader()) })
}

func exposeRetention(m *metrics.Registry, retention *job.RetentionJob) {
	for _, r := range retention.Rules() {
		m.Count(metrics.RetentionDeletedRows, retention.Metrics.Deleted[r.Name], r.Name)
	}
	for outcome, v := range map[job.Outcome]*atomic.Int64{job.OutcomeSuccess: &retention.Metrics.Success,
		job.OutcomeFailure: &retention.Metrics.Failure, job.OutcomeNotLeader: &retention.Metrics.NotLeader} {
		m.Count(metrics.RetentionRuns, v, string(outcome))
	}
	m.Gauge(metrics.RetentionLastRunTimestamp, func() float64 {
		if n := retention.Metrics.LastRunUnixNanos.Load(); n > 0 {
			return float64(n) / 1e9
		}
		return 0
	})
	m.Gauge(metrics.RetentionLastRunDuration, func() float64 { return time.Duration(retention.Metrics.LastDurationNanos.Load()).Seconds() })
}

func exposePools(m *metrics.Registry, src MetricSources) {
	for name, pool := range map[string]*pgxpool.Pool{"api": src.Pool, "queue": src.QueuePool.Pool, "search": src.SearchPool.Pool} {
		m.Gauge(metrics.PgxpoolAcquiredConns, func() float64 { return float64(pool.Stat().AcquiredConns()) }, name)
		m.Gauge(metrics.PgxpoolIdleConns, func() float64 { return float64(pool.Stat().IdleConns()) }, name)
		m.Gauge(metrics.PgxpoolTotalConns, func() float64 { return float64(pool.Stat().TotalConns()) }, name)
		m.Gauge(metrics.PgxpoolMaxConns, func() float64 { return float64(pool.Stat().MaxConns()) }, name)
		m.CountFunc(metrics.PgxpoolEmptyAcquire, func() float64 { return float64(pool.Stat().EmptyAcquireCount()) }, name)
		m.CountFunc(metrics.PgxpoolEmptyAcquireWait, func() float64 { return pool.Stat().EmptyAcquireWaitTime().Seconds() }, name)
	}
	if src.Reads.Enabled() {
		m.Count(metrics.RoutedReads, &src.Reads.Stats.Replica, "replica")
		m.Count(metrics.RoutedReads, &src.Reads.Stats.Primary, "primary")
		m.Count(metrics.RoutedReads, &src.Reads.Stats.Fallbacks, "fallback")
		for name, lag := range src.Reads.Lags() {
			m.Gauge(metrics.ReplicaLagBytes, lag, name)
		}
	}
	rdb := src.Redis
	m.Gauge(metrics.RedisPoolTotalConns, func() float64 { return float64(rdb.PoolStats().TotalConns) })
	m.Gauge(metrics.RedisPoolIdleConns, func() float64 { return float64(rdb.PoolStats().IdleConns) })
	m.CountFunc(metrics.RedisPoolTimeouts, func() float64 { return float64(rdb.PoolStats().Timeouts) })
}

// exposeFleetGauges queries the shared PostgreSQL and Redis at each scrape (why every instance
// exports them: see the catalogue's fleet-wide gauges).
func exposeFleetGauges(m *metrics.Registry, src MetricSources) {
	m.Scrape([]metrics.Metric{metrics.Jobs, metrics.JobsOldestReadyAge, metrics.OutboxBacklog, metrics.OutboxDead,
		metrics.OutboxOldestUnappliedAge, metrics.StreamLag, metrics.StreamPending},
		func(ctx context.Context, emit func(metrics.Metric, float64, ...string)) error {
			stats, err := src.Queue.Stats(ctx)
			if err != nil {
				return err
			}
			for _, s := range stats {
				emit(metrics.Jobs, float64(s.Jobs), s.Queue, s.Status)
				if s.Status == "ready" {
					emit(metrics.JobsOldestReadyAge, max(time.Since(s.OldestReady).Seconds(), 0), s.Queue)
				}
			}
			n, err := src.Outbox.Backlog(ctx)
			if err != nil {
				return err
			}
			emit(metrics.OutboxBacklog, float64(n))
			h, err := src.Outbox.Health(ctx)
			if err != nil {
				return err
			}
			emit(metrics.OutboxDead, float64(h.Dead))
			emit(metrics.OutboxOldestUnappliedAge, h.OldestUnapplied.Seconds())
			for _, stream := range []string{string(src.ReadStream), string(src.OutboxStream)} {
				groups, err := src.Redis.XInfoGroups(ctx, stream).Result()
				if err != nil {
					continue // the stream may not exist yet
				}
				for _, g := range groups {
					emit(metrics.StreamLag, float64(g.Lag), stream, g.Name)
					emit(metrics.StreamPending, float64(g.Pending), stream, g.Name)
				}
			}
			return nil
		})
}

// exposeModeration exposes the moderation actions this instance committed and, read at each
// scrape, the report queue (a count over the open cases' partial index and its first entry).
func exposeModeration(m *metrics.Registry, stats *service.ModerationStats, queue *moderation.Cases) {
	for _, a := range domain.ModerationActions {
		m.CountFunc(metrics.ModerationActions, func() float64 { return float64(stats.Actions()[a]) }, string(a))
	}
	m.Scrape([]metrics.Metric{metrics.ModerationOpenCases, metrics.ModerationOpenReports, metrics.ModerationOldestOpenReportAge},
		func(ctx context.Context, emit func(metrics.Metric, float64, ...string)) error {
			st, err := queue.OpenStats(ctx)
			if err != nil {
				return err
			}
			emit(metrics.ModerationOpenCases, float64(st.OpenCases))
			emit(metrics.ModerationOpenReports, float64(st.OpenReports))
			age := 0.0
			if !st.OldestOpenedAt.IsZero() {
				age = max(time.Since(st.OldestOpenedAt).Seconds(), 0)
			}
			emit(metrics.ModerationOldestOpenReportAge, age)
			return nil
		})
}

// Readiness checks PostgreSQL, Redis, the schema version and the media store.
type Readiness struct {
	pool  *pgxpool.Pool
	rdb   redis.UniversalClient
	media *mediastore.Store
}

// NewReadiness returns the checker.
func NewReadiness(pool *pgxpool.Pool, rdb redis.UniversalClient, media *mediastore.Store) *Readiness {
	return &Readiness{pool: pool, rdb: rdb, media: media}
}

// Ready reports each dependency: nil when it answers.
func (r *Readiness) Ready(ctx context.Context) map[string]error {
	out := map[string]error{"postgres": r.pool.Ping(ctx), "redis": r.rdb.Ping(ctx).Err(), "media": r.media.Check(ctx)}
	v, err := repository.SchemaVersion(ctx, r.pool)
	if err == nil && v < migrations.LatestVersion() {
		err = fmt.Errorf("database at migration %d, binary expects %d: run `inkwell migrate up`", v, migrations.LatestVersion())
	}
	out["migrations"] = err
	return out
}
