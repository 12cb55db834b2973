package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

// JobStore is the durable queue the runner works from (durable.JobQueue).
type JobStore interface {
	// AckAndClaim records the done jobs and claims up to c.Limit more in one transaction;
	// acked[i] is false when done[i]'s lease was lost.
	AckAndClaim(ctx context.Context, done []domain.Job, c domain.JobClaim) (acked []bool, claimed []domain.Job, err error)
	// Fail, Renew and Reap take durations, never instants: the store stamps and compares times
	// by the database's clock, so instances whose clocks differ agree on every lease.
	Fail(ctx context.Context, id, generation int64, lastErr string, permanent bool, retryAfter time.Duration) (bool, error)
	Renew(ctx context.Context, id, generation int64, lease time.Duration) (bool, error)
	Reap(ctx context.Context) (int, error)
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
	// Retry paces a failed job's retries (Base, Max); its MaxAttempts is the job's own, from its
	// row (domain.NewJob.MaxAttempts).
	Retry domain.RetryPolicy
	Grace time.Duration // on shutdown, running jobs get this long before their contexts end
	// AckWait bounds how long a finished job waits for its ack to be batched with others (zero:
	// 2ms). Its slot stays taken meanwhile; it is recorded at once when nothing else is running.
	AckWait time.Duration
	// Observer records each run's duration (nil: none).
	Observer JobObserver
}

// JobObserver records how long each job run took, by queue, kind and outcome (metrics). The kind
// is one the runner has a handler for, else "unknown"; the outcome is one of the Outcome* below.
type JobObserver interface {
	ObserveJob(queue, kind, outcome string, d time.Duration)
}

// The outcomes of one job run, as a JobObserver sees them.
const (
	JobOutcomeDone       = "done"       // the handler succeeded (its ack is batched)
	JobOutcomeRetry      = "retry"      // failed; it runs again after a backoff
	JobOutcomeDead       = "dead"       // failed permanently or for the last time
	JobOutcomeLeaseLost  = "lease_lost" // another runner holds it now: this run's outcome is dropped
	JobOutcomeCancelled  = "cancelled"  // stopped by a shutdown; it runs again once its lease expires
	JobOutcomeUnrecorded = "unrecorded" // failed, and the failure could not be recorded
)

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
	rnd      func() float64
	log      *slog.Logger
	wake     chan struct{}
	// due holds the future due times of jobs the runner heard enqueued (WakeAt), earliest first,
	// at most maxKnownDue; dueChanged tells the loop to re-arm its due timer.
	dueMu      sync.Mutex
	due        []time.Time
	dueChanged chan struct{}
	Stats      QueueStats
}

// maxKnownDue bounds the due times a runner remembers; a job due after those the runner keeps
// is found by the poll instead (at most Poll late).
const maxKnownDue = 1024

// NewRunner returns a runner for cfg.Queue with handlers by job kind. It needs no clock: the
// database stamps the leases, and the runner times its side of a lease with the monotonic clock.
func NewRunner(store JobStore, cfg QueueConfig, handlers map[string]JobHandler, owner string, log *slog.Logger) *Runner {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 2 * time.Millisecond
	}
	return &Runner{store: store, cfg: cfg, handlers: handlers, owner: owner, rnd: rand.Float64,
		log: log.With("queue", cfg.Queue, "owner", owner), wake: make(chan struct{}, 1), dueChanged: make(chan struct{}, 1)}
}

// WakeAt makes the runner look for work at due (a job enqueued for later: its LISTEN/NOTIFY
// arrival), not only at its next poll, so a job due between two polls runs on time (#32). A due
// time already past wakes it now. The runner times it with its own clock against the database's
// available_at: a claim that comes a little early finds nothing, and the next poll takes the job.
func (r *Runner) WakeAt(due time.Time) {
	if !due.After(time.Now()) {
		r.Wake()
		return
	}
	r.dueMu.Lock()
	i, found := slices.BinarySearchFunc(r.due, due, time.Time.Compare)
	if !found && i < maxKnownDue {
		r.due = slices.Insert(r.due, i, due)
		if len(r.due) > maxKnownDue {
			r.due = r.due[:maxKnownDue]
		}
	}
	first := i == 0 && !found
	r.dueMu.Unlock()
	if first {
		select {
		case r.dueChanged <- struct{}{}:
		default:
		}
	}
}

// nextDue drops the due times that have come and returns how long until the earliest left
// (ok false when none), and whether any had come.
func (r *Runner) nextDue() (wait time.Duration, ok, came bool) {
	r.dueMu.Lock()
	defer r.dueMu.Unlock()
	now := time.Now()
	n := 0
	for n < len(r.due) && !r.due[n].After(now) {
		n++
	}
	r.due = r.due[n:]
	if len(r.due) == 0 {
		return 0, false, n > 0
	}
	return r.due[0].Sub(now), true, n > 0
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
//
// A job holds one of the Concurrency slots from its claim until its outcome is recorded. The loop
// records the acks of the jobs that finished and claims work for every free slot in one
// transaction, so a busy runner pays one commit per batch rather than two per job. Finished jobs
// wait for their ack until every running job has finished or AckWait has passed since the first
// of them finished, whichever is sooner; failures are recorded by the job's own goroutine (they
// are rare and carry more state).
func (r *Runner) Run(ctx context.Context) error {
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	// Recording outcomes outlives ctx (a shutdown still acknowledges finished work).
	storeCtx, cancelStore := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelStore()

	finished := make(chan domain.Job, r.cfg.Concurrency) // succeeded, awaiting their ack
	freed := make(chan struct{}, r.cfg.Concurrency)      // failed, lost or cancelled: nothing left to record
	inFlight := 0                                        // claimed jobs whose outcome the loop has not settled
	var toAck []domain.Job
	mayHaveWork := true // the last claim filled every slot, or a wake-up or poll came since
	storeFailed := false
	poll := time.NewTimer(r.cfg.Poll)
	defer poll.Stop()
	dueTimer := time.NewTimer(time.Hour)
	dueTimer.Stop()
	defer dueTimer.Stop()
	armDue := func() { // the due timer fires at the earliest known due time
		dueTimer.Stop()
		wait, ok, came := r.nextDue()
		if came {
			mayHaveWork, storeFailed = true, false
		}
		if ok {
			dueTimer.Reset(wait)
		}
	}
	ackWait := time.NewTimer(time.Hour)
	ackWait.Stop()
	ackDue := false
	var graceOver <-chan time.Time // set once ctx ends
	took := func(j domain.Job) {
		if len(toAck) == 0 {
			ackWait.Reset(r.cfg.AckWait)
			ackDue = false
		}
		toAck = append(toAck, j)
	}

	for {
		for drained := false; !drained; { // take in everything that finished meanwhile
			select {
			case j := <-finished:
				took(j)
			case <-freed:
				inFlight--
			default:
				drained = true
			}
		}
		stopping := ctx.Err() != nil
		if stopping && graceOver == nil {
			t := time.NewTimer(r.cfg.Grace)
			defer t.Stop()
			graceOver = t.C
		}
		free := 0 // slots not even waiting for an ack
		if !stopping && mayHaveWork {
			free = r.cfg.Concurrency - inFlight
		}
		flush := len(toAck) > 0 && (ackDue || stopping || inFlight == len(toAck))
		if !storeFailed && (free > 0 || flush) {
			want := 0
			// An ack claims too, whatever mayHaveWork says: the statement runs anyway, and the
			// jobs just finished may have enqueued their successors (a webhook endpoint's next
			// delivery is enqueued without a NOTIFY, which would serialize the commits).
			if !stopping && (mayHaveWork || len(toAck) > 0) {
				want = r.cfg.Concurrency - inFlight + len(toAck) // acked slots are free again at commit
			}
			sent := time.Now() // the leases start after this, whatever the database's clock says
			acked, jobs, err := r.store.AckAndClaim(storeCtx, toAck, domain.JobClaim{
				Queue: r.cfg.Queue, Owner: r.owner, Limit: want, Lease: r.cfg.Lease})
			if err != nil {
				// Nothing was recorded: keep the acks and try again after the poll interval.
				storeFailed = true
				r.log.Warn("recording finished jobs or claiming more failed; retrying after the poll interval",
					"err", err, "unacknowledged", len(toAck))
			} else {
				r.settleAcks(toAck, acked)
				inFlight -= len(toAck)
				toAck = toAck[:0]
				ackWait.Stop()
				mayHaveWork = want > 0 && len(jobs) == want
				for _, j := range jobs {
					r.Stats.Claimed.Add(1)
					inFlight++
					go func() {
						if r.execute(handlerCtx, j, sent) {
							finished <- j
						} else {
							freed <- struct{}{}
						}
					}()
				}
				continue // more may have finished during the commit
			}
		}
		if stopping && inFlight == 0 {
			return nil
		}
		if handlerCtx.Err() != nil && inFlight == len(toAck) {
			// After the grace period every handler has returned: one last, bounded try to record
			// the finished ones; the rest run again when their leases expire.
			r.finalAck(storeCtx, toAck)
			return nil
		}
		select {
		case j := <-finished:
			took(j)
		case <-freed:
			inFlight--
		case <-ackWait.C:
			ackDue = true
		case <-r.wake:
			mayHaveWork, storeFailed = true, false
		case <-r.dueChanged:
			armDue()
		case <-dueTimer.C:
			armDue()
		case <-poll.C:
			poll.Reset(r.cfg.Poll)
			mayHaveWork, storeFailed = true, false
		case <-doneOrNil(ctx, graceOver):
			// ctx just ended: the next turn starts the grace period and stops claiming.
		case <-graceOver:
			graceOver = make(chan time.Time) // never fires again
			r.log.Warn("shutdown grace over; cancelling running jobs (their leases will expire and they will be retried)")
			cancelHandlers()
		}
	}
}

// doneOrNil is ctx.Done() until the grace period has started, then nil (so the ended context
// does not wake the loop over and over).
func doneOrNil(ctx context.Context, graceOver <-chan time.Time) <-chan struct{} {
	if graceOver != nil {
		return nil
	}
	return ctx.Done()
}

// finalAck records finished jobs once more at shutdown, with a deadline; what fails is run again
// after its lease expires.
func (r *Runner) finalAck(ctx context.Context, done []domain.Job) {
	if len(done) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	acked, _, err := r.store.AckAndClaim(ctx, done, domain.JobClaim{Queue: r.cfg.Queue, Owner: r.owner})
	if err != nil {
		r.log.Error("finished jobs could not be acknowledged at shutdown; they will run again after their leases expire",
			"err", err, "jobs", len(done))
		return
	}
	r.settleAcks(done, acked)
}

// settleAcks counts recorded acks and reports the lost leases.
func (r *Runner) settleAcks(done []domain.Job, acked []bool) {
	for i, j := range done {
		if acked[i] {
			r.Stats.Done.Add(1)
			continue
		}
		r.Stats.LostLeases.Add(1)
		r.log.Warn("job ack changed nothing: the lease was lost (reaped and claimed again)", "job_id", j.ID, "kind", j.Kind)
	}
}

// execute runs one job under its lease, which the database started after claimSent. It reports
// whether the job succeeded and still needs its ack; failures are recorded here, fenced by the
// claim's generation. Each run is a span, a child of the span that enqueued the job (the
// request's), so its statements and sends show in that trace; a retry is one more child.
func (r *Runner) execute(parent context.Context, j domain.Job, claimSent time.Time) (ack bool) {
	log := r.log.With("job_id", j.ID, "kind", j.Kind, "attempt", j.Attempts)
	sctx, span := tracer().Start(events.WithTraceParent(parent, j.TraceParent), "job "+j.Queue+"/"+j.Kind,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.Int64("inkwell.job.id", j.ID), attribute.String("inkwell.job.queue", j.Queue),
			attribute.String("inkwell.job.kind", j.Kind), attribute.Int("inkwell.job.attempt", j.Attempts)))
	defer span.End()
	started := time.Now()
	h, ok := r.handlers[j.Kind]
	if !ok {
		span.SetStatus(codes.Error, "no handler")
		r.observe("unknown", r.fail(sctx, log, j, fmt.Errorf("%w: no handler for kind %q", domain.ErrPermanent, j.Kind)), started)
		return false
	}
	ctx, cancel := context.WithCancel(sctx)
	defer cancel()
	var leaseLost atomic.Bool
	stopLease := r.keepLease(ctx, cancel, j, claimSent, &leaseLost, log)
	err := h(ctx, j)
	stopLease()
	if leaseLost.Load() {
		r.Stats.LostLeases.Add(1)
		r.observe(j.Kind, JobOutcomeLeaseLost, started)
		log.Warn("job lease lost while running; leaving the outcome to its new holder")
		return false
	}
	if parent.Err() != nil {
		// Shutdown cancelled it: whatever it returned, it may not have finished its work, so
		// nothing is recorded; the lease expires and it runs again elsewhere.
		r.observe(j.Kind, JobOutcomeCancelled, started)
		return false
	}
	if err == nil {
		r.observe(j.Kind, JobOutcomeDone, started)
		return true
	}
	span.SetStatus(codes.Error, err.Error())
	r.observe(j.Kind, r.fail(sctx, log, j, err), started)
	return false
}

// observe reports a run that started at started to the observer, if there is one.
func (r *Runner) observe(kind, outcome string, started time.Time) {
	if r.cfg.Observer != nil {
		r.cfg.Observer.ObserveJob(r.cfg.Queue, kind, outcome, time.Since(started))
	}
}

// keepLease ends the handler's context shortly before the lease would expire, and renews the
// lease every third of its length so that a long handler keeps it. If a renewal finds the lease
// gone, the handler's context ends at once.
//
// The runner never compares its clock with the database's (j.LeaseUntil is the database's
// instant): it counts the lease from just before the statement that started it, with the
// monotonic clock, so its deadline falls before the database's expiry however the clocks differ.
func (r *Runner) keepLease(ctx context.Context, cancel context.CancelFunc, j domain.Job, claimSent time.Time, lost *atomic.Bool, log *slog.Logger) (stop func()) {
	margin := r.cfg.Lease / 10
	deadline := time.NewTimer(time.Until(claimSent.Add(r.cfg.Lease - margin)))
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
				sent := time.Now()
				ok, err := r.store.Renew(ctx, j.ID, j.Generation, r.cfg.Lease)
				switch {
				case err != nil:
					log.Warn("job lease renewal failed", "err", err) // retry at the next tick
				case !ok:
					lost.Store(true)
					cancel()
					return
				default:
					deadline.Reset(time.Until(sent.Add(r.cfg.Lease - margin)))
				}
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// fail records a failed run and returns its outcome (a JobOutcome*).
func (r *Runner) fail(ctx context.Context, log *slog.Logger, j domain.Job, err error) string {
	permanent := errors.Is(err, domain.ErrPermanent)
	policy := r.cfg.Retry
	policy.MaxAttempts = j.MaxAttempts
	retryAfter := policy.Backoff(j.Attempts, r.rnd())
	ok, ferr := r.store.Fail(ctx, j.ID, j.Generation, err.Error(), permanent, retryAfter)
	switch {
	case ferr != nil:
		log.Error("job failure could not be recorded", "err", ferr, "job_err", err)
		return JobOutcomeUnrecorded
	case !ok:
		r.Stats.LostLeases.Add(1)
		log.Warn("job failure changed nothing: the lease was lost", "job_err", err)
		return JobOutcomeLeaseLost
	case permanent || policy.Exhausted(j.Attempts):
		r.Stats.Dead.Add(1)
		log.Error("job is dead", "err", err, "attempts", j.Attempts)
		return JobOutcomeDead
	default:
		r.Stats.Retried.Add(1)
		log.Warn("job failed; will retry", "err", err, "retry_after", retryAfter)
		return JobOutcomeRetry
	}
}

// Reaper returns expired leases to the ready set at an interval. Expired means by the
// database's clock, so reapers on instances whose clocks differ agree on which leases ran out.
type Reaper struct {
	store JobStore
	every time.Duration
	log   *slog.Logger
}

// NewReaper returns a reaper.
func NewReaper(store JobStore, every time.Duration, log *slog.Logger) *Reaper {
	return &Reaper{store: store, every: every, log: log}
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
			n, err := p.store.Reap(ctx)
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
