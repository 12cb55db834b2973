package inkwell

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/service"
)

// NewRankConfig returns the ranking pass settings.
func NewRankConfig(cfg *ioc.Config) service.RankConfig {
	return service.RankConfig{TopN: cfg.RankTopN, BatchSize: cfg.RankBatch, Cutoff: cfg.RankCutoff}
}

// NewHotListCache returns the two-level hot-list cache: Redis keeps a list for ten ranking
// intervals (at least an hour), the process for about one interval.
func NewHotListCache(cfg *ioc.Config, rdb redis.UniversalClient, ks cache.Keyspace, now func() time.Time, log *slog.Logger) *cache.HotListCache {
	interval := scheduleInterval(cfg.RankSchedule)
	return cache.NewHotListCache(rdb, ks, cache.HotListTTLs{Redis: max(10*interval, time.Hour), Local: interval}, now, log)
}

// scheduleInterval estimates the time between two runs of a cron schedule.
func scheduleInterval(spec string) time.Duration {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return time.Minute
	}
	first := sched.Next(time.Now())
	return max(sched.Next(first).Sub(first), time.Second)
}

// NewRankJob returns the ranking job; NewCronJobs schedules it.
func NewRankJob(cfg *ioc.Config, ranker *service.RankService, locker *cache.Locker, log *slog.Logger, now func() time.Time) *job.RankJob {
	return job.NewRankJob(ranker, lockerAdapter{locker}, job.RankJobConfig{LockTTL: cfg.RankLockTTL, Timeout: cfg.RankTimeout}, log, now)
}

// CronJobs marks that the scheduled jobs are registered on the cron runner.
type CronJobs struct{}

// NewCronJobs registers every scheduled job. A run still going when its next turn comes is not
// started twice.
func NewCronJobs(cfg *ioc.Config, c *cron.Cron, rank *job.RankJob, idem *repository.IdempotencyStore, log *slog.Logger) (CronJobs, error) {
	once := cron.NewChain(cron.SkipIfStillRunning(ioc.CronLogger(log)))
	if _, err := c.AddJob(cfg.RankSchedule, once.Then(rank)); err != nil {
		return CronJobs{}, err
	}
	// Idempotency keys are kept 24 hours; an hourly sweep deletes the older ones.
	if _, err := c.AddJob("@every 1h", once.Then(cron.FuncJob(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if n, err := idem.Prune(ctx); err != nil {
			log.Warn("idempotency key cleanup failed", "err", err)
		} else if n > 0 {
			log.Info("expired idempotency keys deleted", "keys", n)
		}
	}))); err != nil {
		return CronJobs{}, err
	}
	return CronJobs{}, nil
}

// lockerAdapter lets the job layer use cache.Locker through its own small interface.
type lockerAdapter struct{ l *cache.Locker }

func (a lockerAdapter) TryLock(ctx context.Context, name string, ttl time.Duration) (job.Lease, bool, error) {
	lk, ok, err := a.l.TryLock(ctx, name, ttl)
	if err != nil || !ok {
		return nil, ok, err
	}
	return lk, true, nil
}
