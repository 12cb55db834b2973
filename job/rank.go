package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// Ticker paces the lease renewals.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Outcome is how one run ended.
type Outcome string

// Run outcomes, also the labels of the job's metrics.
const (
	OutcomeSuccess   Outcome = "success"
	OutcomeFailure   Outcome = "failure"
	OutcomeNotLeader Outcome = "skipped-not-leader"
)

// ErrStopped is the answer of a run asked for after Stop.
var ErrStopped = errors.New("ranking job stopped")

// RankMetrics counts the ranking job's runs. Values only grow, except the last-run fields.
type RankMetrics struct {
	Success, Failure, NotLeader atomic.Int64
	LastDurationNanos           atomic.Int64
	LastEntries                 atomic.Int64
}

// RankJobConfig tunes the ranking job.
type RankJobConfig struct {
	LockTTL time.Duration // lease length; renewed every LockTTL/3 for as long as this instance holds it
	Timeout time.Duration // a run that takes longer is cancelled (and keeps the previous list)
	// NewTicker paces the renewals; nil is time.NewTicker. Tests pass tickers they fire by hand.
	NewTicker func(d time.Duration) Ticker
}

// RankJob runs the ranking pass on one instance at a time. The instance that wins the Redis lock
// keeps it from run to run — renewing it in the background every third of its TTL, whether a run
// is going on or not — and ranks at every tick, so a fleet computes the list once per interval,
// not once per instance. The others find the lock held and skip; that is normal, not an error.
// The holder gives the lock up only when it stops (Stop) or when a renewal fails: then it cannot
// be sure it is the only one ranking any more, so it cancels the run under way, releases the lock
// if it is still its own, and competes for it again at its next tick. An instance that dies keeps
// nothing: its lease expires and another one takes the lock at its next tick.
type RankJob struct {
	ranker    Ranker
	locker    Locker
	cfg       RankJobConfig
	log       *slog.Logger
	now       func() time.Time
	newTicker func(d time.Duration) Ticker
	Metrics   RankMetrics

	slot    chan struct{}          // one run at a time; Stop takes it to wait for the run under way
	state   chan struct{}          // guards the tenure's changes and stopped (a channel, so Stop can give up waiting)
	held    atomic.Pointer[tenure] // nil while another instance holds the lock, or nobody does
	stopped bool
}

// tenure is one stretch of holding the lock, from the TryLock that won it to a failed renewal
// or Stop.
type tenure struct {
	lease   Lease
	ctx     context.Context // ends with the tenure; its cause says why
	end     context.CancelCauseFunc
	renewer chan struct{} // closed once the renewals have stopped
}

// NewRankJob returns the job.
func NewRankJob(ranker Ranker, locker Locker, cfg RankJobConfig, log *slog.Logger, now func() time.Time) *RankJob {
	newTicker := cfg.NewTicker
	if newTicker == nil {
		newTicker = func(d time.Duration) Ticker { return wallTicker{time.NewTicker(d)} }
	}
	return &RankJob{ranker: ranker, locker: locker, cfg: cfg, log: log.With("job", "rank"), now: now, newTicker: newTicker,
		slot: make(chan struct{}, 1), state: make(chan struct{}, 1)}
}

type wallTicker struct{ *time.Ticker }

func (t wallTicker) C() <-chan time.Time { return t.Ticker.C }

// lockName is the lock every instance's ranking job competes for.
const lockName = "job:rank"

// Run is the cron entry point.
func (j *RankJob) Run() { _, _ = j.RunOnce(context.Background()) }

// RunOnce runs one pass if this instance holds the lock, or wins it now.
func (j *RankJob) RunOnce(ctx context.Context) (Outcome, error) {
	j.slot <- struct{}{}
	defer func() { <-j.slot }()
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
	t, err := j.tenure(ctx)
	if err != nil {
		return OutcomeFailure, 0, err
	}
	if t == nil {
		return OutcomeNotLeader, 0, nil
	}
	runCtx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	defer context.AfterFunc(t.ctx, cancel)() // the tenure ending cancels the run
	list, err := j.ranker.Rank(runCtx)
	if t.ctx.Err() != nil {
		return OutcomeFailure, 0, errors.Join(fmt.Errorf("during the run: %w", context.Cause(t.ctx)), err)
	}
	if err != nil {
		return OutcomeFailure, 0, err
	}
	return OutcomeSuccess, len(list.Entries), nil
}

// tenure returns the tenure this run ranks under: the one going on, or a new one if the lock is
// free. It returns nil when another instance holds the lock.
func (j *RankJob) tenure(ctx context.Context) (*tenure, error) {
	j.state <- struct{}{}
	defer func() { <-j.state }()
	if j.stopped {
		return nil, ErrStopped
	}
	if t := j.held.Load(); t != nil {
		if t.ctx.Err() == nil {
			return t, nil
		}
		j.held.Store(nil) // a renewal failed since the last run: compete again
	}
	lease, ok, err := j.locker.TryLock(ctx, lockName, j.cfg.LockTTL)
	if err != nil || !ok {
		return nil, err
	}
	tctx, end := context.WithCancelCause(context.Background())
	t := &tenure{lease: lease, ctx: tctx, end: end, renewer: make(chan struct{})}
	go j.keepRenewing(t)
	j.held.Store(t)
	j.log.InfoContext(ctx, "ranking lock taken: this instance ranks at every tick until it stops or loses the lock")
	return t, nil
}

// keepRenewing renews the lease every third of its TTL until the tenure ends. A failed renewal
// ends it: the lease may have expired and another instance may be ranking already.
func (j *RankJob) keepRenewing(t *tenure) {
	defer close(t.renewer)
	tick := j.newTicker(j.cfg.LockTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C():
		}
		err := t.lease.Renew(t.ctx)
		if err == nil {
			continue
		}
		if t.ctx.Err() != nil { // stopped while renewing
			return
		}
		t.end(fmt.Errorf("ranking lock lost: %w", err))
		j.log.Warn("ranking lock renewal failed; this instance stops ranking until it wins the lock again", "err", err)
		// Gives the lock up at once if it is still ours (a renewal that timed out), so another
		// instance need not wait for the lease to expire; a lock taken over is left alone.
		ctx, cancel := context.WithTimeout(context.Background(), j.cfg.LockTTL)
		if err := t.lease.Release(ctx); err != nil {
			j.log.Debug("ranking lock not released after the failed renewal", "err", err)
		}
		cancel()
		return
	}
}

// Stop ends this instance's tenure for good, after the run under way (cancelled) has returned:
// the renewals stop and the lock is released, so another instance takes over at its next tick
// rather than when the lease expires. Later runs fail with ErrStopped. Calling it again does
// nothing. A failed release is only logged (the lease expires by itself); the error says that ctx
// ended before the run under way returned, and the lock was left to expire.
func (j *RankJob) Stop(ctx context.Context) error {
	select {
	case j.state <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	t := j.held.Swap(nil)
	j.stopped = true
	<-j.state
	if t == nil {
		return nil
	}
	t.end(ErrStopped)
	select {
	case j.slot <- struct{}{}:
		defer func() { <-j.slot }()
	case <-ctx.Done():
		return fmt.Errorf("ranking lock left to expire: the run under way did not return: %w", ctx.Err())
	}
	<-t.renewer // returns at once: the tenure has ended
	if !errors.Is(context.Cause(t.ctx), ErrStopped) {
		return nil // a renewal had failed: the lock was given up already
	}
	if err := t.lease.Release(ctx); err != nil {
		j.log.Warn("ranking lock release failed; it expires by itself", "err", err)
		return nil
	}
	j.log.Info("ranking lock released")
	return nil
}

// Leader reports whether this instance holds the ranking lock (as far as it knows: until its next
// renewal fails).
func (j *RankJob) Leader() bool {
	t := j.held.Load()
	return t != nil && t.ctx.Err() == nil
}
