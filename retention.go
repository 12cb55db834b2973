package inkwell

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
)

// NewRetentionRules is every retention rule, in the order a run applies them, from the
// INKWELL_RETENTION_* settings (0 turns a rule off). Refresh tokens go before sessions, so a
// session's delete cascades to next to nothing.
func NewRetentionRules(cfg *ioc.Config) []domain.RetentionRule {
	age := func(name string, d time.Duration) domain.RetentionRule {
		return domain.RetentionRule{Name: name, MaxAge: d}
	}
	// A session is useless once it cannot be refreshed (its last refresh token has expired) and
	// its last access token has expired too; then it is kept for the grace.
	var session time.Duration
	if cfg.RetentionSessions > 0 {
		session = max(cfg.RefreshLifetime, cfg.JWTLifetime) + cfg.RetentionSessions
	}
	history := domain.RetentionRule{Name: domain.RetentionReadingHistory}
	if cfg.RetentionHistory > 0 {
		history.Newest, history.Since = cfg.RetentionHistory, HistoryCheckWindow(cfg)
	}
	return []domain.RetentionRule{
		age(domain.RetentionInbox, cfg.RetentionInbox),
		age(domain.RetentionJobsDone, cfg.RetentionJobsDone),
		age(domain.RetentionJobsDead, cfg.RetentionJobsDead),
		age(domain.RetentionNotifications, cfg.RetentionNotifications),
		age(domain.RetentionRefreshTokens, cfg.RetentionSessions),
		age(domain.RetentionSessionsRevoked, session),
		age(domain.RetentionSessionsIdle, session),
		age(domain.RetentionIdempotencyKeys, cfg.RetentionIdempotency),
		history,
		age(domain.RetentionLoginCodes, cfg.RetentionCodes),
		age(domain.RetentionLoginCodeMeters, cfg.RetentionCodes),
		age(domain.RetentionAccountCodes, cfg.RetentionCodes),
		age(domain.RetentionOutboxApplied, cfg.RetentionOutbox),
		age(domain.RetentionOutboxDead, cfg.RetentionOutboxDead),
	}
}

// HistoryCheckWindow is how far back a run looks for readers whose history may have grown past
// the cap: three runs' worth (at least an hour), so a run or two that failed or were skipped
// miss nobody. A reader left over the cap beyond that is cut at their next read.
func HistoryCheckWindow(cfg *ioc.Config) time.Duration {
	if cfg.RetentionSchedule == ioc.RetentionOff {
		return 24 * time.Hour
	}
	return max(3*scheduleInterval(cfg.RetentionSchedule), time.Hour)
}

// NewRetentionConfig returns the retention job's settings.
func NewRetentionConfig(cfg *ioc.Config) job.RetentionConfig {
	return job.RetentionConfig{Rules: NewRetentionRules(cfg), Batch: cfg.RetentionBatch, Pause: cfg.RetentionPause}
}

// NewRetentionJob returns the retention job; NewScheduler schedules it. Its cleanup stops a run
// under way (App.Serve has done so already when it ran).
func NewRetentionJob(store job.RetentionStore, cfg job.RetentionConfig, log *slog.Logger, now func() time.Time) (*job.RetentionJob, func()) {
	j := job.NewRetentionJob(store, cfg, log, now)
	return j, j.Stop
}

// OutcomeNotLeader is the outcome of a retention run that found the lock held elsewhere (for
// `inkwell prune`, which does not import the job layer).
const OutcomeNotLeader = job.OutcomeNotLeader

// NewPruner is the retention job on pool, for `inkwell prune`, which needs PostgreSQL only.
func NewPruner(cfg *ioc.Config, pool *pgxpool.Pool, log *slog.Logger) *job.RetentionJob {
	return job.NewRetentionJob(repository.NewRetentionStore(pool, repository.NewQuerier()), NewRetentionConfig(cfg), log, time.Now)
}
