package inkwell

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/metrics"
	"github.com/inkwell-dev/inkwell/migrations"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
)

// NewMetricsHandler exposes every component's counters on the Prometheus registry (which also
// records the HTTP requests) and serves them at GET /metrics.
func NewMetricsHandler(m *metrics.Registry, pool *pgxpool.Pool, queuePool durable.QueuePool, searchPool search.Pool, rdb redis.UniversalClient, breaker *cache.Breaker,
	bcast *cache.Broadcaster, users *cache.UserCache, articles *cache.ArticleCache, workers Workers, rank *job.RankJob, retention *job.RetentionJob, queue *durable.JobQueue, outbox *durable.Outbox,
	reads ReadStream, outboxStream OutboxStream, sessions *service.SessionService, viewers *cache.ViewerState, revocations *cache.Revocations,
	fallback *cache.FallbackLimit, idempotency *service.IdempotencyRunner, repair *cache.Repairer) http.Handler {
	for name, st := range map[string]*cache.Stats{"user": users.Stats(), "article": articles.Stats(), "viewer": &viewers.Stats} {
		l := prometheus.Labels{"cache": name}
		m.Counter("inkwell_cache_hits_total", "Read-through cache hits.", l, &st.Hits)
		m.Counter("inkwell_cache_misses_total", "Read-through cache misses.", l, &st.Misses)
		m.Counter("inkwell_cache_local_hits_total", "Reads answered by the in-process tier (also counted as hits).", l, &st.LocalHits)
		m.Counter("inkwell_cache_null_hits_total", "Reads answered by a 'does not exist' marker.", l, &st.NullHits)
		m.Counter("inkwell_cache_fallbacks_total", "Reads served from PostgreSQL because Redis failed.", l, &st.Fallbacks)
		m.Counter("inkwell_cache_loads_total", "Loads from PostgreSQL.", l, &st.Loads)
		m.Counter("inkwell_singleflight_shared_total", "Callers that shared another caller's load.", l, &st.SharedLoads)
	}
	for _, w := range workers {
		switch w := w.(type) {
		case *events.Publisher:
			m.Counter("inkwell_read_events_published_total", "Read events written to the stream.", nil, &w.Stats.Published)
			m.Counter("inkwell_read_events_dropped_total", "Read events dropped: buffer full.", nil, &w.Stats.Dropped)
			m.Counter("inkwell_read_events_failed_total", "Read events lost: the stream write failed.", nil, &w.Stats.Failed)
		case *events.ReadAggregator:
			m.Counter("inkwell_anonymous_reads_batched_total", "Anonymous reads taken from the in-process tally into batches.", nil, &w.Stats.Counted)
			m.Counter("inkwell_anonymous_reads_sent_total", "Anonymous reads written to the stream inside batches.", nil, &w.Stats.Sent)
			m.Counter("inkwell_anonymous_read_batches_total", "Batches of anonymous reads written to the stream.", nil, &w.Stats.Batches)
			m.Counter("inkwell_anonymous_read_batches_retried_total", "Batch writes that failed and were kept for the next flush.", nil, &w.Stats.Retried)
			m.Counter("inkwell_anonymous_reads_lost_total", "Anonymous reads lost: their batch could not be written.", nil, &w.Stats.Lost)
		case *events.Consumer:
			l := prometheus.Labels{"group": w.Group()}
			m.Counter("inkwell_stream_batches_total", "Batches handled by stream consumers.", l, &w.Stats.Batches)
			m.Counter("inkwell_stream_entries_total", "Entries handled (batch sizes add up here).", l, &w.Stats.Entries)
			m.Counter("inkwell_stream_reclaimed_total", "Entries reclaimed from dead consumers.", l, &w.Stats.Reclaimed)
			m.Counter("inkwell_stream_failures_total", "Batches that failed and stay pending.", l, &w.Stats.Failures)
			m.Counter("inkwell_stream_dead_lettered_total", "Entries that ran out of deliveries and were moved to <stream>:dead.", l, &w.Stats.DeadLettered)
		case *job.Runner:
			l := prometheus.Labels{"queue": w.Queue()}
			m.Counter("inkwell_jobs_attempts_total", "Job attempts started (every claim of a job is one).", l, &w.Stats.Claimed)
			m.Counter("inkwell_jobs_done_total", "Jobs finished.", l, &w.Stats.Done)
			m.Counter("inkwell_jobs_retried_total", "Job attempts that failed and will retry.", l, &w.Stats.Retried)
			m.Counter("inkwell_jobs_dead_total", "Jobs that ran out of attempts or failed permanently.", l, &w.Stats.Dead)
			m.Counter("inkwell_jobs_lost_leases_total", "Job outcomes refused because the lease was lost.", l, &w.Stats.LostLeases)
		case *job.Relay:
			m.Counter("inkwell_outbox_relayed_total", "Outbox events written to the stream.", nil, &w.Stats.Published)
			m.Counter("inkwell_outbox_redriven_total", "Outbox events this instance published again: not applied within the redelivery window.", nil, &w.Stats.Redriven)
			m.Counter("inkwell_outbox_died_total", "Outbox events this instance marked dead: their re-drives ran out.", nil, &w.Stats.Dead)
		case *job.Preloader:
			m.Counter("inkwell_preloads_total", "Article detail preloads that ran.", nil, &w.Stats.Done)
			m.Counter("inkwell_preloads_dropped_total", "Article detail preloads dropped: queue full.", nil, &w.Stats.Dropped)
		case *job.RevocationRenewer:
			m.Counter("inkwell_revocation_lease_renewals_total", "Revocation lease renewals by this instance.", nil, &w.Stats.Renewed)
			m.Counter("inkwell_revocation_lease_failures_total", "Revocation lease renewals by this instance that failed.", nil, &w.Stats.Failed)
			m.Gauge("inkwell_revocation_lease_failing", "1 while this instance cannot renew the revocation lease.", nil,
				func() float64 { return boolGauge(w.Stats.Failing.Load()) })
		}
	}
	m.Counter("inkwell_cache_fallback_refused_total", "Cache reads answered 503 because every PostgreSQL fallback slot stayed taken while Redis failed.", nil, &fallback.Refused)
	m.Gauge("inkwell_cache_fallback_in_use", "PostgreSQL fallback loads running now (of INKWELL_DB_FALLBACK_CONCURRENCY).", nil,
		func() float64 { return float64(fallback.InUse.Load()) })
	m.Counter("inkwell_session_postgres_checks_total", "Access tokens checked in PostgreSQL: Redis failed or held no revocation lease.", nil,
		&sessions.Stats.PostgresChecks)
	m.Counter("inkwell_revocation_memory_hits_total", "Access tokens whose session this instance remembered as not revoked (no Redis round trip).", nil,
		&revocations.Stats.MemoryHits)
	m.Counter("inkwell_revocations_unconfirmed_total", "Revocations some instance did not acknowledge in time, answered once every in-process memory older than the mark had ended.", nil,
		&revocations.Stats.Unconfirmed)
	m.Counter("inkwell_revocations_delayed_total", "Revocations whose Redis mark failed at first.", nil, &sessions.Stats.RevocationsDelayed)
	m.Counter("inkwell_revocations_unmarked_total", "Revocations answered without their Redis mark, after every older revocation lease ended.", nil,
		&sessions.Stats.RevocationsUnmarked)
	m.Counter("inkwell_rank_runs_total", "Ranking runs by outcome.", prometheus.Labels{"outcome": string(job.OutcomeSuccess)}, &rank.Metrics.Success)
	m.Counter("inkwell_rank_runs_total", "Ranking runs by outcome.", prometheus.Labels{"outcome": string(job.OutcomeFailure)}, &rank.Metrics.Failure)
	m.Counter("inkwell_rank_runs_total", "Ranking runs by outcome.", prometheus.Labels{"outcome": string(job.OutcomeNotLeader)}, &rank.Metrics.NotLeader)
	m.Gauge("inkwell_rank_last_duration_seconds", "Duration of the last ranking run.", nil,
		func() float64 { return time.Duration(rank.Metrics.LastDurationNanos.Load()).Seconds() })
	m.Gauge("inkwell_rank_lock_held", "1 while this instance holds the ranking lock (and so ranks at every tick).", nil,
		func() float64 {
			if rank.Leader() {
				return 1
			}
			return 0
		})
	registerRetentionMetrics(m, retention)
	for outcome, v := range map[string]*atomic.Int64{"executed": &idempotency.Stats.Executed, "replayed": &idempotency.Stats.Replayed,
		"mismatch": &idempotency.Stats.Mismatched, "in_flight": &idempotency.Stats.InFlight, "commit_unknown": &idempotency.Stats.CommitUnknown} {
		m.Counter("inkwell_idempotency_requests_total", "Requests with an Idempotency-Key, by how they ended: executed, replayed (a stored answer), "+
			"mismatch (the key was used for another request: 422), in_flight (the request holding the key did not finish in time: 409), "+
			"commit_unknown (the COMMIT did not answer: 503, the write may or may not stand).", prometheus.Labels{"outcome": outcome}, v)
	}

	for name, pool := range map[string]*pgxpool.Pool{"api": pool, "queue": queuePool.Pool, "search": searchPool.Pool} {
		l := prometheus.Labels{"pool": name}
		m.Gauge("inkwell_pgxpool_acquired_conns", "PostgreSQL connections in use.", l, func() float64 { return float64(pool.Stat().AcquiredConns()) })
		m.Gauge("inkwell_pgxpool_idle_conns", "Idle PostgreSQL connections.", l, func() float64 { return float64(pool.Stat().IdleConns()) })
		m.Gauge("inkwell_pgxpool_total_conns", "PostgreSQL connections open.", l, func() float64 { return float64(pool.Stat().TotalConns()) })
		m.Gauge("inkwell_pgxpool_max_conns", "Connections the pool may open (pool_max_conns).", l, func() float64 { return float64(pool.Stat().MaxConns()) })
		m.CounterFunc("inkwell_pgxpool_empty_acquire_total", "Acquires that had to wait for a connection.", l, func() float64 { return float64(pool.Stat().EmptyAcquireCount()) })
		m.CounterFunc("inkwell_pgxpool_empty_acquire_wait_seconds_total", "Time acquires spent waiting for a connection (saturation: its rate is the mean number of waiters).", l,
			func() float64 { return pool.Stat().EmptyAcquireWaitTime().Seconds() })
	}
	m.Gauge("inkwell_redis_breaker_open", "1 while the Redis circuit breaker refuses calls (Redis failing; requests use PostgreSQL).", nil,
		func() float64 { return boolGauge(breaker.Open()) })
	m.Gauge("inkwell_cache_invalidation_subscribed", "1 while the cache invalidation channel is subscribed; at 0 the in-process cache tiers are off (reads go to Redis).", nil,
		func() float64 { return boolGauge(bcast.Subscribed()) })
	m.Counter("inkwell_cache_invalidations_published_total", "Cache changes broadcast to the other instances (one message per change).", nil, &bcast.Stats.Published)
	m.Counter("inkwell_cache_invalidation_publish_failures_total", "Cache changes not broadcast: the other instances' in-process copies stay until they expire.", nil, &bcast.Stats.PublishFailed)
	m.Counter("inkwell_cache_invalidations_received_total", "Cache changes of other instances dropped from the in-process tiers.", nil, &bcast.Stats.Received)
	m.Counter("inkwell_cache_invalidation_subscription_losses_total", "Times the cache invalidation subscription was lost (the tiers went off).", nil, &bcast.Stats.Losses)
	m.Gauge("inkwell_cache_invalidation_repairs_pending", "Cache invalidations Redis did not take, still being retried by this instance (their entries may be served stale by instances that reach Redis).", nil,
		func() float64 { return float64(repair.Stats.Pending.Load()) })
	m.Counter("inkwell_cache_invalidation_repair_failures_total", "Rounds of invalidation retries that left some behind (Redis still failing from here).", nil, &repair.Stats.Failures)
	m.Counter("inkwell_redis_breaker_rejected_total", "Redis calls refused by the open circuit breaker.", nil, &breaker.Rejected)
	m.Gauge("inkwell_redis_pool_total_conns", "Redis connections open.", nil, func() float64 { return float64(rdb.PoolStats().TotalConns) })
	m.Gauge("inkwell_redis_pool_idle_conns", "Idle Redis connections.", nil, func() float64 { return float64(rdb.PoolStats().IdleConns) })
	m.CounterFunc("inkwell_redis_pool_timeouts_total", "Waits for a Redis connection that timed out.", nil, func() float64 { return float64(rdb.PoolStats().Timeouts) })

	// These gauges are read from the shared PostgreSQL and Redis, so every instance exports the same
	// fleet-wide value (give or take the moment of its scrape). Dashboards and alerts take the max
	// over instances, never the sum. Exporting them from one instance only (a lock holder) was
	// rejected: the ranking lock lives in Redis, so during a Redis outage or a leader handover no
	// instance would export them, and the series would vanish when they matter most. The price is
	// one small set of queries per instance per scrape (the jobs and outbox tables stay bounded by
	// retention).
	depth := prometheus.NewDesc("inkwell_jobs", "Jobs by queue and status.", []string{"queue", "status"}, nil)
	oldest := prometheus.NewDesc("inkwell_jobs_oldest_ready_age_seconds", "Age of the oldest ready job.", []string{"queue"}, nil)
	backlog := prometheus.NewDesc("inkwell_outbox_backlog", "Outbox events not yet relayed.", nil, nil)
	dead := prometheus.NewDesc("inkwell_outbox_dead", "Outbox events that ran out of attempts (see `inkwell outbox list --status dead`).", nil, nil)
	unapplied := prometheus.NewDesc("inkwell_outbox_oldest_unapplied_age_seconds", "Age of the oldest outbox event its consumer has not applied (0: none), on PostgreSQL's clock.", nil, nil)
	lag := prometheus.NewDesc("inkwell_stream_lag", "Entries not yet delivered to a consumer group.", []string{"stream", "group"}, nil)
	pending := prometheus.NewDesc("inkwell_stream_pending", "Entries delivered but not acknowledged.", []string{"stream", "group"}, nil)
	m.Scraped([]*prometheus.Desc{depth, oldest, backlog, dead, unapplied, lag, pending}, func(ctx context.Context, emit func(*prometheus.Desc, float64, ...string)) error {
		stats, err := queue.Stats(ctx)
		if err != nil {
			return err
		}
		for _, s := range stats {
			emit(depth, float64(s.Jobs), s.Queue, s.Status)
			if s.Status == "ready" {
				emit(oldest, max(time.Since(s.OldestReady).Seconds(), 0), s.Queue)
			}
		}
		n, err := outbox.Backlog(ctx)
		if err != nil {
			return err
		}
		emit(backlog, float64(n))
		h, err := outbox.Health(ctx)
		if err != nil {
			return err
		}
		emit(dead, float64(h.Dead))
		emit(unapplied, h.OldestUnapplied.Seconds())
		for _, stream := range []string{string(reads), string(outboxStream)} {
			groups, err := rdb.XInfoGroups(ctx, stream).Result()
			if err != nil {
				continue // the stream may not exist yet
			}
			for _, g := range groups {
				emit(lag, float64(g.Lag), stream, g.Name)
				emit(pending, float64(g.Pending), stream, g.Name)
			}
		}
		return nil
	})
	return m.Handler()
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Readiness checks PostgreSQL, Redis and the schema version.
type Readiness struct {
	pool *pgxpool.Pool
	rdb  redis.UniversalClient
}

// NewReadiness returns the checker.
func NewReadiness(pool *pgxpool.Pool, rdb redis.UniversalClient) *Readiness {
	return &Readiness{pool: pool, rdb: rdb}
}

// Ready reports each dependency: nil when it answers.
func (r *Readiness) Ready(ctx context.Context) map[string]error {
	out := map[string]error{"postgres": r.pool.Ping(ctx), "redis": r.rdb.Ping(ctx).Err()}
	v, err := repository.SchemaVersion(ctx, r.pool)
	if err == nil && v < migrations.LatestVersion() {
		err = fmt.Errorf("database at migration %d, binary expects %d: run `inkwell migrate up`", v, migrations.LatestVersion())
	}
	out["migrations"] = err
	return out
}

// registerRetentionMetrics exposes what this instance's retention runs did. Summed over the
// fleet's instances, the counters are everything the fleet deleted; the last-run gauges are of
// the last run this instance made while holding the lock (the newest over the fleet is the max).
func registerRetentionMetrics(m *metrics.Registry, retention *job.RetentionJob) {
	for _, r := range retention.Rules() {
		m.Counter("inkwell_retention_deleted_rows_total", "Rows the retention job deleted, by policy (mostly a table's name).",
			prometheus.Labels{"table": r.Name}, retention.Metrics.Deleted[r.Name])
	}
	for outcome, v := range map[job.Outcome]*atomic.Int64{job.OutcomeSuccess: &retention.Metrics.Success,
		job.OutcomeFailure: &retention.Metrics.Failure, job.OutcomeNotLeader: &retention.Metrics.NotLeader} {
		m.Counter("inkwell_retention_runs_total", "Retention runs by outcome (skipped-not-leader: another instance held the lock).",
			prometheus.Labels{"outcome": string(outcome)}, v)
	}
	m.Gauge("inkwell_retention_last_run_timestamp_seconds", "When this instance's last retention run ended (Unix time; 0: none yet).", nil,
		func() float64 {
			if n := retention.Metrics.LastRunUnixNanos.Load(); n > 0 {
				return float64(n) / 1e9
			}
			return 0
		})
	m.Gauge("inkwell_retention_last_run_duration_seconds", "Duration of this instance's last retention run.", nil,
		func() float64 { return time.Duration(retention.Metrics.LastDurationNanos.Load()).Seconds() })
}
