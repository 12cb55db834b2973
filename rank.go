package inkwell

import (
	"context"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/service"
)

// NewRankConfig returns the ranking pass settings.
func NewRankConfig(j ioc.JobsConfig) service.RankConfig {
	return service.RankConfig{TopN: j.RankTopN, BatchSize: job.RankBatch, Cutoff: job.RankCutoff}
}

// NewHotListTTLs returns how long the two-level hot-list cache keeps a list: Redis for ten
// ranking intervals (at least an hour), the process for about one interval.
func NewHotListTTLs(j ioc.JobsConfig) cache.HotListTTLs {
	interval := scheduleInterval(j.RankSchedule)
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

// NewRankJobConfig returns the ranking job's settings; NewScheduler schedules the job.
func NewRankJobConfig() job.RankJobConfig {
	return job.RankJobConfig{LockTTL: job.RankLockTTL, Timeout: job.RankTimeout}
}

// NewRankJob returns the ranking job. Its cleanup gives the ranking lock up (App.Serve has done
// so already when it ran), so `inkwell rank`, or anything else that wires the app without
// serving, leaves the lock free for the serving instances.
func NewRankJob(ranker job.Ranker, locker job.Locker, cfg job.RankJobConfig, log *slog.Logger, now func() time.Time) (*job.RankJob, func()) {
	j := job.NewRankJob(ranker, locker, cfg, log, now)
	return j, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = j.Stop(ctx) // the lease expires by itself if this fails
	}
}

// NewRankLocker is the lock the ranking job takes: cache.Locker.
func NewRankLocker(l *cache.Locker) job.Locker { return lockerAdapter{l} }

// lockerAdapter lets the job layer use cache.Locker through its own small interface.
type lockerAdapter struct{ l *cache.Locker }

func (a lockerAdapter) TryLock(ctx context.Context, name string, ttl time.Duration) (job.Lease, bool, error) {
	lk, ok, err := a.l.TryLock(ctx, name, ttl)
	if err != nil || !ok {
		return nil, ok, err
	}
	return lk, true, nil
}
