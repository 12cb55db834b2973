package inkwell

import (
	"context"
	"log/slog"
	"time"

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

// NewHotListTTLs returns how long the two-level hot-list cache keeps a list: Redis for ten
// ranking intervals (at least an hour), the process for about one interval.
func NewHotListTTLs(cfg *ioc.Config) cache.HotListTTLs {
	interval := scheduleInterval(cfg.RankSchedule)
	return cache.HotListTTLs{Redis: max(10*interval, time.Hour), Local: interval}
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

// NewRankJobConfig returns the ranking job's settings; NewCronJobs schedules the job.
func NewRankJobConfig(cfg *ioc.Config) job.RankJobConfig {
	return job.RankJobConfig{LockTTL: cfg.RankLockTTL, Timeout: cfg.RankTimeout}
}

// NewRankLocker is the lock the ranking job takes: cache.Locker.
func NewRankLocker(l *cache.Locker) job.Locker { return lockerAdapter{l} }

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
