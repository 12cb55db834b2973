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

// RetentionStore runs the retention statements: the fleet-wide lock, and per rule one bounded
// delete or count.
type RetentionStore interface {
	// TryLock takes the retention lock; ok is false when another runner holds it. unlock gives
	// it back.
	TryLock(ctx context.Context) (unlock func(context.Context) error, ok bool, err error)
	// Prune deletes up to limit rows rule lets go, in one statement.
	Prune(ctx context.Context, rule domain.RetentionRule, limit int) (int64, error)
	// CountPrunable counts, up to limit, the rows Prune would delete now.
	CountPrunable(ctx context.Context, rule domain.RetentionRule, limit int) (int64, error)
}

// RetentionConfig tunes the retention job.
type RetentionConfig struct {
	Rules []domain.RetentionRule // in the order they run; rules that are Off are reported, not run
	Batch int                    // rows per statement
	Pause time.Duration          // between two statements of one rule, so the deletes leave room for the requests
	// Sleep waits d or until ctx ends (then it returns ctx's error); nil is a timer. Tests pass
	// one that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

// RetentionResult is what one run did for one rule.
type RetentionResult struct {
	Rule       domain.RetentionRule
	Rows       int64 // deleted; in a dry run, due now (up to the cap)
	Statements int   // delete statements run (0 in a dry run)
	Capped     bool  // dry run: the count stopped at the cap, more may be due
	Err        error
}

// RetentionReport is what one run did.
type RetentionReport struct {
	Outcome  Outcome
	Results  []RetentionResult
	Duration time.Duration
}

// Deleted is the number of rows the run deleted over all rules.
func (r RetentionReport) Deleted() int64 {
	var n int64
	for _, res := range r.Results {
		n += res.Rows
	}
	return n
}

// RetentionMetrics counts the retention job's work on this instance. Deleted has one counter per
// rule; values only grow, except the last-run fields (of the last run that held the lock).
type RetentionMetrics struct {
	Deleted                     map[string]*atomic.Int64
	Success, Failure, NotLeader atomic.Int64
	LastRunUnixNanos            atomic.Int64 // when the last run ended
	LastDurationNanos           atomic.Int64
}

// RetentionJob deletes what no longer needs keeping, table by table: per rule, bounded deletes of
// at most Batch rows, each its own statement (and transaction), with a pause between two, until a
// batch comes back short or the run is stopped. One runner of the fleet works at a time: a run
// takes the store's lock first and skips when another holds it. Deleting twice is harmless (every
// statement is idempotent and skips locked rows), so the lock saves work, not correctness.
type RetentionJob struct {
	store   RetentionStore
	cfg     RetentionConfig
	log     *slog.Logger
	now     func() time.Time
	Metrics RetentionMetrics

	stop    context.Context // ends at Stop: the run under way returns after its current statement
	stopped context.CancelFunc
}

// NewRetentionJob returns the job; NewScheduler schedules it.
func NewRetentionJob(store RetentionStore, cfg RetentionConfig, log *slog.Logger, now func() time.Time) *RetentionJob {
	if cfg.Batch < 1 {
		cfg.Batch = 1
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	j := &RetentionJob{store: store, cfg: cfg, log: log.With("job", "retention"), now: now}
	j.Metrics.Deleted = make(map[string]*atomic.Int64, len(cfg.Rules))
	for _, r := range cfg.Rules {
		j.Metrics.Deleted[r.Name] = new(atomic.Int64)
	}
	j.stop, j.stopped = context.WithCancel(context.Background())
	return j
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Rules are the job's rules, in the order they run.
func (j *RetentionJob) Rules() []domain.RetentionRule { return j.cfg.Rules }

// Run is the cron entry point.
func (j *RetentionJob) Run() { _, _ = j.RunOnce(context.Background()) }

// Stop ends the run under way (after its current statement) and makes later runs return at once,
// so a shutdown does not wait for a long pass.
func (j *RetentionJob) Stop() { j.stopped() }

// RunOnce runs one pass over every rule if this runner gets the lock, and logs one summary line.
// The error joins every rule's error; a rule that fails does not stop the others.
func (j *RetentionJob) RunOnce(ctx context.Context) (RetentionReport, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(j.stop, cancel)()
	start := j.now()
	rep, err := j.run(ctx)
	rep.Duration = j.now().Sub(start)
	switch rep.Outcome {
	case OutcomeNotLeader:
		j.Metrics.NotLeader.Add(1)
		j.log.DebugContext(ctx, "retention run skipped: another runner holds the lock", "outcome", rep.Outcome)
		return rep, nil
	case OutcomeSuccess:
		j.Metrics.Success.Add(1)
	default:
		j.Metrics.Failure.Add(1)
	}
	if len(rep.Results) > 0 {
		j.Metrics.LastRunUnixNanos.Store(j.now().UnixNano())
		j.Metrics.LastDurationNanos.Store(int64(rep.Duration))
	}
	attrs := []any{"outcome", rep.Outcome, "duration", rep.Duration, "deleted", rep.Deleted()}
	for _, res := range rep.Results {
		if !res.Rule.Off() {
			attrs = append(attrs, res.Rule.Name, res.Rows)
		}
	}
	if err != nil {
		j.log.ErrorContext(ctx, "retention run finished with errors", append(attrs, "err", err)...)
	} else {
		j.log.InfoContext(ctx, "retention run finished", attrs...)
	}
	return rep, err
}

func (j *RetentionJob) run(ctx context.Context) (RetentionReport, error) {
	if err := ctx.Err(); err != nil {
		return RetentionReport{Outcome: OutcomeFailure}, err
	}
	unlock, ok, err := j.store.TryLock(ctx)
	if err != nil {
		return RetentionReport{Outcome: OutcomeFailure}, err
	}
	if !ok {
		return RetentionReport{Outcome: OutcomeNotLeader}, nil
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := unlock(uctx); err != nil {
			j.log.Warn("retention lock release failed", "err", err)
		}
	}()
	rep := RetentionReport{Outcome: OutcomeSuccess}
	var errs []error
	for _, rule := range j.cfg.Rules {
		res := RetentionResult{Rule: rule}
		if !rule.Off() && ctx.Err() == nil {
			j.prune(ctx, &res)
		}
		if res.Err != nil {
			errs = append(errs, res.Err)
		}
		rep.Results = append(rep.Results, res)
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, fmt.Errorf("retention run stopped: %w", err))
	}
	if len(errs) > 0 {
		rep.Outcome = OutcomeFailure
	}
	return rep, errors.Join(errs...)
}

// prune runs one rule's batches until one comes back short.
func (j *RetentionJob) prune(ctx context.Context, res *RetentionResult) {
	for {
		n, err := j.store.Prune(ctx, res.Rule, j.cfg.Batch)
		res.Statements++
		res.Rows += n
		j.Metrics.Deleted[res.Rule.Name].Add(n)
		if err != nil {
			if ctx.Err() == nil { // a stop is reported once, by the run
				res.Err = err
			}
			return
		}
		if n < int64(j.cfg.Batch) {
			return
		}
		if j.cfg.Sleep(ctx, j.cfg.Pause) != nil {
			return
		}
	}
}

// DryRun counts, for every rule, the rows a run would delete now, up to limit per rule; it
// deletes nothing and takes no lock.
func (j *RetentionJob) DryRun(ctx context.Context, limit int) (RetentionReport, error) {
	start := j.now()
	rep := RetentionReport{Outcome: OutcomeSuccess}
	var errs []error
	for _, rule := range j.cfg.Rules {
		res := RetentionResult{Rule: rule}
		if !rule.Off() {
			res.Rows, res.Err = j.store.CountPrunable(ctx, rule, limit)
			res.Capped = res.Err == nil && res.Rows >= int64(limit)
		}
		if res.Err != nil {
			errs = append(errs, res.Err)
			rep.Outcome = OutcomeFailure
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Duration = j.now().Sub(start)
	return rep, errors.Join(errs...)
}
