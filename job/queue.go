package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"inkwell/domain"
)

// JobStore is the durable queue the runner works from (repository.JobQueue).
type JobStore interface {
	Claim(ctx context.Context, queue, owner string, n int, now, leaseUntil time.Time) ([]domain.Job, error)
	Ack(ctx context.Context, id, generation int64, now time.Time) (bool, error)
	Fail(ctx context.Context, id, generation int64, lastErr string, permanent bool, retryAt, now time.Time) (bool, error)
	Renew(ctx context.Context, id, generation int64, leaseUntil, now time.Time) (bool, error)
	Reap(ctx context.Context, now time.Time) (int, error)
}

// JobHandler does one job. Returning an error wrapping domain.ErrPermanent buries the job;
// any other error retries it later. Its context ends before the job's lease does (and sooner if
// the lease is lost), so a handler that respects it never runs unleased.
type JobHandler func(ctx context.Context, j domain.Job) error

// QueueConfig tunes one queue's runner.
type QueueConfig struct {
	Queue       string
	Concurrency int           // jobs run at once by this process
	Lease       time.Duration // a claim's lease; renewed every third of it while the handler runs
	Poll        time.Duration // how often to look for work when no notification arrives
	BackoffBase time.Duration
	BackoffMax  time.Duration
	Grace       time.Duration // on shutdown, running jobs get this long before their contexts end
}

// QueueStats counts a runner's work. Values only grow.
type QueueStats struct {
	Claimed, Done, Retried, Dead, LostLeases atomic.Int64
}

// Runner claims jobs of one queue and runs them with bounded concurrency.
type Runner struct {
	store    JobStore
	cfg      QueueConfig
	handlers map[string]JobHandler
	owner    string
	now      func() time.Time
	rnd      func() float64
	log      *slog.Logger
	wake     chan struct{}
	Stats    QueueStats
}

// NewRunner returns a runner for cfg.Queue with handlers by job kind.
func NewRunner(store JobStore, cfg QueueConfig, handlers map[string]JobHandler, owner string, now func() time.Time, log *slog.Logger) *Runner {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	return &Runner{store: store, cfg: cfg, handlers: handlers, owner: owner, now: now, rnd: rand.Float64,
		log: log.With("queue", cfg.Queue, "owner", owner), wake: make(chan struct{}, 1)}
}

// Wake makes an idle runner look for work now (a LISTEN/NOTIFY arrival).
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx ends, then stops claiming, gives running jobs Grace to finish, and cancels
// what is still running. Cancelled jobs are not acknowledged: their leases expire and the reaper
// hands them to another worker.
func (r *Runner) Run(ctx context.Context) error {
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	slots := make(chan struct{}, r.cfg.Concurrency)
	var running sync.WaitGroup
	poll := time.NewTimer(0)
	defer poll.Stop()
	for ctx.Err() == nil {
		free := cap(slots) - len(slots)
		if free == 0 {
			select { // wait for a slot
			case slots <- struct{}{}:
				<-slots
				continue
			case <-ctx.Done():
				continue
			}
		}
		now := r.now()
		jobs, err := r.store.Claim(ctx, r.cfg.Queue, r.owner, free, now, now.Add(r.cfg.Lease))
		if err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "claim failed", "err", err)
		}
		for _, j := range jobs {
			r.Stats.Claimed.Add(1)
			slots <- struct{}{}
			running.Add(1)
			go func() {
				defer func() { <-slots; running.Done() }()
				r.execute(handlerCtx, j)
			}()
		}
		if len(jobs) == free && err == nil {
			continue // there may be more
		}
		poll.Reset(r.cfg.Poll)
		select {
		case <-ctx.Done():
		case <-r.wake:
		case <-poll.C:
		}
	}
	done := make(chan struct{})
	go func() { running.Wait(); close(done) }()
	grace := time.NewTimer(r.cfg.Grace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		r.log.Warn("shutdown grace over; cancelling running jobs (their leases will expire and they will be retried)")
		cancelHandlers()
		<-done
	}
	return nil
}

// execute runs one job under its lease and records the outcome, fenced by the claim's generation.
func (r *Runner) execute(parent context.Context, j domain.Job) {
	log := r.log.With("job_id", j.ID, "kind", j.Kind, "attempt", j.Attempts)
	h, ok := r.handlers[j.Kind]
	if !ok {
		r.finish(parent, log, j, fmt.Errorf("%w: no handler for kind %q", domain.ErrPermanent, j.Kind))
		return
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var leaseLost atomic.Bool
	stopLease := r.keepLease(ctx, cancel, j, &leaseLost, log)
	err := h(ctx, j)
	stopLease()
	if leaseLost.Load() {
		r.Stats.LostLeases.Add(1)
		log.Warn("job lease lost while running; leaving the outcome to its new holder")
		return
	}
	if parent.Err() != nil && err != nil {
		return // shutdown cancelled it: the lease expires and it runs again elsewhere
	}
	r.finish(parent, log, j, err)
}

// keepLease ends the handler's context shortly before the lease would expire, and renews the
// lease every third of its length so that a long handler keeps it. If a renewal finds the lease
// gone, the handler's context ends at once.
func (r *Runner) keepLease(ctx context.Context, cancel context.CancelFunc, j domain.Job, lost *atomic.Bool, log *slog.Logger) (stop func()) {
	margin := r.cfg.Lease / 10
	deadline := time.NewTimer(j.LeaseUntil.Sub(r.now()) - margin)
	tick := time.NewTicker(r.cfg.Lease / 3)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer deadline.Stop()
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-deadline.C:
				log.Warn("job lease about to expire; cancelling the handler")
				cancel()
				return
			case <-tick.C:
				now := r.now()
				until := now.Add(r.cfg.Lease)
				ok, err := r.store.Renew(ctx, j.ID, j.Generation, until, now)
				switch {
				case err != nil:
					log.Warn("job lease renewal failed", "err", err) // retry at the next tick
				case !ok:
					lost.Store(true)
					cancel()
					return
				default:
					deadline.Reset(until.Sub(r.now()) - margin)
				}
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

func (r *Runner) finish(ctx context.Context, log *slog.Logger, j domain.Job, err error) {
	now := r.now()
	if err == nil {
		ok, aerr := r.store.Ack(ctx, j.ID, j.Generation, now)
		switch {
		case aerr != nil:
			log.Error("job ack failed; it will run again after its lease expires", "err", aerr)
		case !ok:
			r.Stats.LostLeases.Add(1)
			log.Warn("job ack changed nothing: the lease was lost (reaped and claimed again)")
		default:
			r.Stats.Done.Add(1)
		}
		return
	}
	permanent := errors.Is(err, domain.ErrPermanent)
	retryAt := now.Add(domain.Backoff(j.Attempts, r.cfg.BackoffBase, r.cfg.BackoffMax, r.rnd()))
	ok, ferr := r.store.Fail(ctx, j.ID, j.Generation, err.Error(), permanent, retryAt, now)
	switch {
	case ferr != nil:
		log.Error("job failure could not be recorded", "err", ferr, "job_err", err)
	case !ok:
		r.Stats.LostLeases.Add(1)
		log.Warn("job failure changed nothing: the lease was lost", "job_err", err)
	case permanent || j.Attempts >= j.MaxAttempts:
		r.Stats.Dead.Add(1)
		log.Error("job is dead", "err", err, "attempts", j.Attempts)
	default:
		r.Stats.Retried.Add(1)
		log.Warn("job failed; will retry", "err", err, "retry_at", retryAt)
	}
}

// Reaper returns expired leases to the ready set at an interval.
type Reaper struct {
	store JobStore
	every time.Duration
	now   func() time.Time
	log   *slog.Logger
}

// NewReaper returns a reaper.
func NewReaper(store JobStore, every time.Duration, now func() time.Time, log *slog.Logger) *Reaper {
	return &Reaper{store: store, every: every, now: now, log: log}
}

// Run reaps until ctx ends.
func (p *Reaper) Run(ctx context.Context) error {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			n, err := p.store.Reap(ctx, p.now())
			if err != nil && ctx.Err() == nil {
				p.log.Warn("reaping expired job leases failed", "err", err)
			} else if n > 0 {
				p.log.Info("returned jobs with expired leases", "jobs", n)
			}
		}
	}
}

// Queue is the queue this runner works.
func (r *Runner) Queue() string { return r.cfg.Queue }
