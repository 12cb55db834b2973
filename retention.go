package inkwell

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/uploads"
	"github.com/inkwell-dev/inkwell/service"
)

// How long rows of inkwell's internal tables are kept (settings until 0.1.0). They are no
// deployment's choice: each is the shortest age that never cuts what the app still reads.
const (
	// RetentionInbox: consumer inbox records (event ids applied) stay far past any redelivery
	// (a reclaim comes within a minute, an outbox re-drive within hours); at least an hour, or a
	// redelivered event whose record is gone is applied twice.
	RetentionInbox = 24 * time.Hour
	// RetentionJobsDone: a week of done jobs to look back on; RetentionJobsDead: a month for an
	// operator to notice a dead job and 'inkwell jobs retry' it.
	RetentionJobsDone = 7 * 24 * time.Hour
	RetentionJobsDead = 30 * 24 * time.Hour
	// RetentionIdempotency: Idempotency-Key records are replayed for 24 hours, no less.
	RetentionIdempotency = 24 * time.Hour
	// RetentionCodes: grace after expiry before login codes, their PostgreSQL meters and email
	// verification / password reset codes are deleted, so a late guess still meets its meter.
	RetentionCodes = time.Hour
	// RetentionOutbox: applied outbox events are kept a day for debugging; dead ones a month
	// for 'inkwell outbox retry'.
	RetentionOutbox     = 24 * time.Hour
	RetentionOutboxDead = 30 * 24 * time.Hour
	// RetentionUploads: an upload nothing refers to (no avatar, cover or body) for a week is
	// deleted (issue #29); its objects leave the media store once no upload uses their keys.
	RetentionUploads = 7 * 24 * time.Hour
	// RetentionSignIn: grace after expiry before sign-in states and exchange codes nobody used are
	// deleted (expired ones are refused already; the rows only take room).
	RetentionSignIn = time.Hour
	// RetentionWebhookDeliveries: webhook deliveries that are done (delivered or dead) and their
	// attempts are kept 30 days after they were made, for the deliveries page and a redelivery; a
	// pending one is never deleted (its retries end within a day).
	RetentionWebhookDeliveries = 30 * 24 * time.Hour
)

// NewRetentionRules is every retention rule, in the order a run applies them, from the
// INKWELL_RETENTION_* settings and the constants above (0 turns a rule off). Refresh tokens go before sessions, so a
// session's delete cascades to next to nothing.
func NewRetentionRules(cfg *ioc.Config) []domain.RetentionRule {
	age := func(name string, d time.Duration) domain.RetentionRule {
		return domain.RetentionRule{Name: name, MaxAge: d}
	}
	// A session is useless once it cannot be refreshed (its last refresh token has expired) and
	// its last access token has expired too; then it is kept for the grace.
	var session time.Duration
	if cfg.Retention.Sessions > 0 {
		session = max(cfg.Auth.RefreshLifetime, cfg.Auth.JWTLifetime) + cfg.Retention.Sessions
	}
	history := domain.RetentionRule{Name: domain.RetentionReadingHistory}
	if cfg.Retention.History > 0 {
		history.Newest, history.Since = cfg.Retention.History, HistoryCheckWindow(cfg)
	}
	return []domain.RetentionRule{
		age(domain.RetentionInbox, RetentionInbox),
		age(domain.RetentionJobsDone, RetentionJobsDone),
		age(domain.RetentionJobsDead, RetentionJobsDead),
		age(domain.RetentionNotifications, cfg.Retention.Notifications),
		age(domain.RetentionRefreshTokens, cfg.Retention.Sessions),
		age(domain.RetentionSessionsRevoked, session),
		age(domain.RetentionSessionsIdle, session),
		age(domain.RetentionIdempotencyKeys, RetentionIdempotency),
		history,
		age(domain.RetentionLoginCodes, RetentionCodes),
		age(domain.RetentionLoginCodeMeters, RetentionCodes),
		age(domain.RetentionAccountCodes, RetentionCodes),
		age(domain.RetentionSignInStates, RetentionSignIn),
		age(domain.RetentionSignInCodes, RetentionSignIn),
		age(domain.RetentionWebhookDeliveries, RetentionWebhookDeliveries),
		age(domain.RetentionOutboxApplied, RetentionOutbox),
		age(domain.RetentionOutboxDead, RetentionOutboxDead),
		age(domain.RetentionUploads, RetentionUploads),
		// After the uploads: their objects, orphaned at least the grace ago (the store's deletes).
		age(domain.RetentionUploadObjects, service.UploadOrphanGrace),
	}
}

// HistoryCheckWindow is how far back a run looks for readers whose history may have grown past
// the cap: three runs' worth (at least an hour), so a run or two that failed or were skipped
// miss nobody. A reader left over the cap beyond that is cut at their next read.
func HistoryCheckWindow(cfg *ioc.Config) time.Duration {
	if cfg.Retention.Schedule == ioc.RetentionOff {
		return 24 * time.Hour
	}
	return max(3*scheduleInterval(cfg.Retention.Schedule), time.Hour)
}

// NewRetentionConfig returns the retention job's settings.
func NewRetentionConfig(cfg *ioc.Config) job.RetentionConfig {
	return job.RetentionConfig{Rules: NewRetentionRules(cfg), Batch: job.RetentionBatch, Pause: job.RetentionPause}
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

// NewPruner is the retention job on pool, for `inkwell prune`, which needs PostgreSQL and, for the
// orphaned upload objects only, the media store (INKWELL_MEDIA_URL); without it that rule fails and
// leaves the orphans for a later run.
func NewPruner(cfg *ioc.Config, pool *pgxpool.Pool, log *slog.Logger) *job.RetentionJob {
	q := repository.NewQuerier()
	var media service.MediaStore = unavailableMedia{}
	if m, _, err := NewMediaStore(cfg); err != nil {
		log.Warn("the media store is unavailable: orphaned upload objects stay", "err", err)
	} else {
		media = m
	}
	store := NewRetentionStore(repository.NewRetentionStore(pg.SessionPool{Pool: pool}, q), uploads.NewStore(pool, q), media)
	return job.NewRetentionJob(store, NewRetentionConfig(cfg), log, time.Now)
}
