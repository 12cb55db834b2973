package job

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// Ranker computes and stores the hot list.
type Ranker interface {
	Rank(ctx context.Context) (domain.HotList, error)
}

// Lease is one holding of a distributed lock.
type Lease interface {
	// Renew extends the lease; an error means it may no longer be ours.
	Renew(ctx context.Context) error
	Release(ctx context.Context) error
}

// Locker hands out leases; ok is false when another instance holds the lock.
type Locker interface {
	TryLock(ctx context.Context, name string, ttl time.Duration) (lease Lease, ok bool, err error)
}

// Outcome is how one run ended.
type Outcome string

// Run outcomes, also the labels of the job's metrics.
const (
	OutcomeSuccess   Outcome = "success"
	OutcomeFailure   Outcome = "failure"
	OutcomeNotLeader Outcome = "skipped-not-leader"
)

// RankMetrics counts the ranking job's runs. Values only grow, except the last-run fields.
type RankMetrics struct {
	Success, Failure, NotLeader atomic.Int64
	LastDurationNanos           atomic.Int64
	LastEntries                 atomic.Int64
}

// RankJobConfig tunes the ranking job.
type RankJobConfig struct {
	LockTTL time.Duration // lease length; renewed every LockTTL/3 while the run lasts
	Timeout time.Duration // a run that takes longer is cancelled (and keeps the previous list)
}

// RankJob runs the ranking pass on one instance at a time: it takes a Redis lock, renews it while
// the pass runs, and stops the pass if it loses the lock. Losing the race for the lock is normal
// (another instance is ranking) and is not an error.
type RankJob struct {
	ranker  Ranker
	locker  Locker
	cfg     RankJobConfig
	log     *slog.Logger
	now     func() time.Time
	Metrics RankMetrics
}

// NewRankJob returns the job.
func NewRankJob(ranker Ranker, locker Locker, cfg RankJobConfig, log *slog.Logger, now func() time.Time) *RankJob {
	return &RankJob{ranker: ranker, locker: locker, cfg: cfg, log: log.With("job", "rank"), now: now}
}

// lockName is the lock every instance's ranking job competes for.
const lockName = "job:rank"

// Run is the cron entry point.
func (j *RankJob) Run() { _, _ = j.RunOnce(context.Background()) }

// RunOnce runs one pass if this instance gets the lock.
func (j *RankJob) RunOnce(ctx context.Context) (Outcome, error) {
	start := j.now()
	j.log.InfoContext(ctx, "ranking run started")
	outcome, entries, err := j.run(ctx)
	d := j.now().Sub(start)
	j.Metrics.LastDurationNanos.Store(int64(d))
	switch outcome {
	case OutcomeSuccess:
		j.Metrics.Success.Add(1)
		j.Metrics.LastEntries.Store(int64(entries))
		j.log.InfoContext(ctx, "ranking run finished", "outcome", outcome, "duration", d, "entries", entries)
	case OutcomeNotLeader:
		j.Metrics.NotLeader.Add(1)
		j.log.DebugContext(ctx, "ranking run skipped: another instance holds the lock", "outcome", outcome)
		j.log.InfoContext(ctx, "ranking run finished", "outcome", outcome, "duration", d)
	default:
		j.Metrics.Failure.Add(1)
		j.log.ErrorContext(ctx, "ranking run failed; the previous hot list stays", "outcome", outcome, "duration", d, "err", err)
	}
	return outcome, err
}

func (j *RankJob) run(ctx context.Context) (Outcome, int, error) {
	lease, ok, err := j.locker.TryLock(ctx, lockName, j.cfg.LockTTL)
	if err != nil {
		return OutcomeFailure, 0, err
	}
	if !ok {
		return OutcomeNotLeader, 0, nil
	}
	runCtx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	var lost atomic.Bool
	var renewing sync.WaitGroup
	renewing.Add(1)
	go func() {
		defer renewing.Done()
		j.keepRenewing(runCtx, lease, cancel, &lost)
	}()
	list, err := j.ranker.Rank(runCtx)
	cancel()
	renewing.Wait()
	if rerr := lease.Release(context.WithoutCancel(ctx)); rerr != nil && !lost.Load() {
		j.log.WarnContext(ctx, "ranking lock release failed; it expires by itself", "err", rerr)
	}
	if lost.Load() {
		return OutcomeFailure, 0, errors.Join(errors.New("ranking lock lost during the run"), err)
	}
	if err != nil {
		return OutcomeFailure, 0, err
	}
	return OutcomeSuccess, len(list.Entries), nil
}

// keepRenewing renews the lease every third of its TTL. When a renewal fails the instance can no
// longer be sure it is the only one ranking, so it cancels its own run.
func (j *RankJob) keepRenewing(ctx context.Context, lease Lease, cancel context.CancelFunc, lost *atomic.Bool) {
	t := time.NewTicker(j.cfg.LockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := lease.Renew(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				lost.Store(true)
				j.log.WarnContext(ctx, "ranking lock renewal failed; stopping this run", "err", err)
				cancel()
				return
			}
		}
	}
}
