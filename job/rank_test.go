package job_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
)

// rankLockName is the lock every instance's ranking job competes for (job.lockName).
const rankLockName = "job:rank"

// rankClock is the job's injected clock: every reading is step later than the one before, so a
// run (two readings) lasts exactly step.
type rankClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *rankClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

const rankStep = 1234 * time.Millisecond

// rankWait bounds waits in the ranking tests, which have always allowed 30s (not testenv.DefaultWait).
const rankWait = 30 * time.Second

// rankerOpts shape a fake Ranker: what it returns, and whether it blocks until released or until
// its context ends.
type rankerOpts struct {
	list domain.HotList
	err  error
	hold bool
}

// fakeRanker is a fake Ranker.
type fakeRanker struct {
	rankerOpts
	calls   atomic.Int64
	entered chan struct{} // receives once per call, when the call starts
	release chan struct{}
	ctxErr  chan error // the run context's error when a held call ended with it
}

func newFakeRanker(o rankerOpts) *fakeRanker {
	return &fakeRanker{rankerOpts: o, entered: make(chan struct{}, 8), release: make(chan struct{}), ctxErr: make(chan error, 8)}
}

func (r *fakeRanker) Rank(ctx context.Context) (domain.HotList, error) {
	r.calls.Add(1)
	r.entered <- struct{}{}
	if r.hold {
		select {
		case <-r.release:
		case <-ctx.Done():
			r.ctxErr <- ctx.Err()
			return domain.HotList{}, ctx.Err()
		}
	}
	return r.list, r.err
}

// rankLease is a fake lease: renew is its answer to Renew. Each Renew is reported on renewed
// when a test listens (nil: nobody does).
type rankLease struct {
	renew    error
	renews   atomic.Int64
	releases atomic.Int64
	renewed  chan error
}

func (l *rankLease) Renew(context.Context) error {
	l.renews.Add(1)
	err := l.renew // read before it is reported: the test may change it once it is
	if l.renewed != nil {
		l.renewed <- err
	}
	return err
}

func (l *rankLease) Release(context.Context) error { l.releases.Add(1); return nil }

// rankLocker answers TryLock with ok/err and hands out lease.
type rankLocker struct {
	mu    sync.Mutex
	ok    bool
	err   error
	lease *rankLease
	tries atomic.Int64
}

func (l *rankLocker) set(ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ok = ok
}

func (l *rankLocker) TryLock(_ context.Context, name string, _ time.Duration) (job.Lease, bool, error) {
	l.tries.Add(1)
	if name != rankLockName {
		return nil, false, errors.New("unexpected lock name " + name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil || !l.ok {
		return nil, false, l.err
	}
	return l.lease, true, nil
}

// rankTicks hands out the renewal tickers a job asks for, which the test fires by hand: one per
// tenure (each lock the job wins).
type rankTicks struct{ made chan *manualTicker }

func newRankTicks() *rankTicks { return &rankTicks{made: make(chan *manualTicker, 8)} }

func (r *rankTicks) NewTicker(d time.Duration) job.Ticker {
	t := &manualTicker{every: d, c: make(chan time.Time), stopped: make(chan struct{})}
	r.made <- t
	return t
}

// next returns the ticker of the job's next tenure.
func (r *rankTicks) next(t *testing.T) *manualTicker {
	t.Helper()
	return testenv.Recv(t, r.made, "the renewal ticker of a new tenure", rankWait)
}

// requireNone checks the job started no tenure since the last next.
func (r *rankTicks) requireNone(t *testing.T) {
	t.Helper()
	select {
	case <-r.made:
		t.Fatal("the job took the lock again")
	default:
	}
}

type manualTicker struct {
	every   time.Duration
	c       chan time.Time
	once    sync.Once
	stopped chan struct{} // closed by Stop: the renewer has returned
}

func (t *manualTicker) C() <-chan time.Time { return t.c }
func (t *manualTicker) Stop()               { t.once.Do(func() { close(t.stopped) }) }

// fire hands one tick to the renewer (unbuffered: it has taken it when fire returns).
func (t *manualTicker) fire(tb *testing.T) {
	tb.Helper()
	select {
	case t.c <- time.Time{}:
	case <-time.After(30 * time.Second):
		tb.Fatal("the renewer does not take its tick: it has stopped")
	}
}

// requireStopped waits for the renewer to return (it stops its ticker as it does).
func (t *manualTicker) requireStopped(tb *testing.T) {
	tb.Helper()
	testenv.Recv(tb, t.stopped, "the renewer to stop", rankWait)
}

// rankLogs is a slog handler keeping the messages logged.
type rankLogs struct {
	mu   sync.Mutex
	msgs []string
}

func (h *rankLogs) Enabled(context.Context, slog.Level) bool { return true }

func (h *rankLogs) Handle(_ context.Context, r slog.Record) error {
	var outcome string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "outcome" {
			outcome = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, strings.TrimSpace(r.Message+" "+outcome))
	return nil
}

func (h *rankLogs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *rankLogs) WithGroup(string) slog.Handler      { return h }

func (h *rankLogs) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.msgs...)
}

// rankJobOpts builds a RankJob; zero fields get defaults that keep renewals out of the way.
type rankJobOpts struct {
	Ranker    *fakeRanker
	Locker    job.Locker
	LockTTL   time.Duration // default 1h
	Timeout   time.Duration // default 30s
	Ticks     *rankTicks    // the renewal tickers, fired by the test; default: tickers nobody fires
	WallClock bool          // renew on real time.Tickers instead
}

// newRankJob returns the job; it is stopped (its lock released) when the test ends.
func newRankJob(t *testing.T, o rankJobOpts) (*job.RankJob, *rankLogs) {
	t.Helper()
	if o.LockTTL == 0 {
		o.LockTTL = time.Hour
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	cfg := job.RankJobConfig{LockTTL: o.LockTTL, Timeout: o.Timeout}
	if !o.WallClock {
		if o.Ticks == nil {
			o.Ticks = &rankTicks{made: make(chan *manualTicker, 64)}
		}
		cfg.NewTicker = o.Ticks.NewTicker
	}
	logs := &rankLogs{}
	clock := &rankClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), step: rankStep}
	j := job.NewRankJob(o.Ranker, o.Locker, cfg, slog.New(logs), clock.Now)
	t.Cleanup(func() {
		if err := j.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return j, logs
}

type rankCounts struct{ success, failure, notLeader, entries int64 }

func requireRankCounts(t *testing.T, j *job.RankJob, want rankCounts) {
	t.Helper()
	got := rankCounts{j.Metrics.Success.Load(), j.Metrics.Failure.Load(), j.Metrics.NotLeader.Load(), j.Metrics.LastEntries.Load()}
	if got != want {
		t.Fatalf("rankCounts %+v, want %+v", got, want)
	}
	if d := j.Metrics.LastDurationNanos.Load(); d != int64(rankStep) {
		t.Fatalf("LastDurationNanos = %v, want %v (one step of the injected clock)", time.Duration(d), rankStep)
	}
}

func rankEntries(n int) domain.HotList {
	return domain.HotList{Entries: make([]domain.HotEntry, n)}
}

var errRankPass = errors.New("scan published articles: connection reset")

// lockTaken is what a job logs when it wins the lock.
const lockTaken = "ranking lock taken: this instance ranks at every tick until it stops or loses the lock"

func TestRankJob_RunOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		ranker      rankerOpts
		locker      *rankLocker
		timeout     time.Duration
		wantOutcome job.Outcome
		wantErr     string // substring; empty: no error
		wantRanks   int64
		wantHeld    bool // the job keeps the lock after the run (and releases it on Stop)
		wantMetrics rankCounts
		wantLogs    []string
	}{
		{
			name:        "another instance holds the lock: skipped, the ranker never runs",
			locker:      &rankLocker{ok: false},
			wantOutcome: job.OutcomeNotLeader,
			wantMetrics: rankCounts{notLeader: 1},
			wantLogs:    []string{"ranking run started", "ranking run skipped: another instance holds the lock skipped-not-leader", "ranking run finished skipped-not-leader"},
		},
		{
			name:        "the lock cannot be asked for: a failure, the ranker never runs",
			locker:      &rankLocker{err: errors.New("lock job:rank: dial tcp: connection refused")},
			wantOutcome: job.OutcomeFailure,
			wantErr:     "connection refused",
			wantMetrics: rankCounts{failure: 1},
			wantLogs:    []string{"ranking run started", "ranking run failed; the previous hot list stays failure"},
		},
		{
			name:        "a pass: success, the list size recorded, the lock kept",
			ranker:      rankerOpts{list: rankEntries(7)},
			locker:      &rankLocker{ok: true, lease: &rankLease{}},
			wantOutcome: job.OutcomeSuccess,
			wantRanks:   1,
			wantHeld:    true,
			wantMetrics: rankCounts{success: 1, entries: 7},
			wantLogs:    []string{"ranking run started", lockTaken, "ranking run finished success"},
		},
		{
			name:        "the pass fails: a failure, the lock kept",
			ranker:      rankerOpts{err: errRankPass},
			locker:      &rankLocker{ok: true, lease: &rankLease{}},
			wantOutcome: job.OutcomeFailure,
			wantErr:     "connection reset",
			wantRanks:   1,
			wantHeld:    true,
			wantMetrics: rankCounts{failure: 1},
			wantLogs:    []string{"ranking run started", lockTaken, "ranking run failed; the previous hot list stays failure"},
		},
		{
			name:        "the pass outlives its timeout: cancelled, a failure, the lock kept",
			ranker:      rankerOpts{hold: true},
			locker:      &rankLocker{ok: true, lease: &rankLease{}},
			timeout:     time.Nanosecond,
			wantOutcome: job.OutcomeFailure,
			wantErr:     context.DeadlineExceeded.Error(),
			wantRanks:   1,
			wantHeld:    true,
			wantMetrics: rankCounts{failure: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFakeRanker(tc.ranker)
			j, logs := newRankJob(t, rankJobOpts{Ranker: r, Locker: tc.locker, Timeout: tc.timeout})
			outcome, err := j.RunOnce(t.Context())
			if outcome != tc.wantOutcome {
				t.Fatalf("outcome %q (err %v), want %q", outcome, err, tc.wantOutcome)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if n := r.calls.Load(); n != tc.wantRanks {
				t.Fatalf("ranker ran %d times, want %d", n, tc.wantRanks)
			}
			requireRankCounts(t, j, tc.wantMetrics)
			if tc.wantLogs != nil {
				if got := logs.messages(); !slices.Equal(got, tc.wantLogs) {
					t.Fatalf("logs %q, want %q", got, tc.wantLogs)
				}
			}
			if j.Leader() != tc.wantHeld {
				t.Fatalf("Leader() = %v after the run, want %v", j.Leader(), tc.wantHeld)
			}
			if tc.locker.lease == nil {
				return
			}
			if n := tc.locker.lease.releases.Load(); n != 0 {
				t.Fatalf("lease released %d times by the run, want 0: the lock is kept between runs", n)
			}
			if err := j.Stop(t.Context()); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if n := tc.locker.lease.releases.Load(); n != 1 {
				t.Fatalf("lease released %d times by Stop, want 1", n)
			}
		})
	}
}

// The holder runs at every tick on the lease it won once: no new TryLock, no release in between,
// renewals in the background between runs; Stop releases it once.
func TestRankJob_HolderRunsEveryTickWithoutReleasing(t *testing.T) {
	t.Parallel()
	lease := &rankLease{renewed: make(chan error, 8)}
	locker := &rankLocker{ok: true, lease: lease}
	ticks := newRankTicks()
	r := newFakeRanker(rankerOpts{list: rankEntries(3)})
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: locker, LockTTL: 9 * time.Second, Ticks: ticks})
	if o, err := j.RunOnce(t.Context()); o != job.OutcomeSuccess || err != nil {
		t.Fatalf("first run: %q, %v", o, err)
	}
	tick := ticks.next(t)
	if tick.every != 3*time.Second {
		t.Fatalf("renewals every %v, want a third of the 9s lease", tick.every)
	}
	for run := 2; run <= 4; run++ {
		tick.fire(t) // between runs, the lease is renewed
		if err := testenv.Recv(t, lease.renewed, "a renewal", rankWait); err != nil {
			t.Fatal(err)
		}
		if o, err := j.RunOnce(t.Context()); o != job.OutcomeSuccess || err != nil {
			t.Fatalf("run %d: %q, %v", run, o, err)
		}
	}
	ticks.requireNone(t)
	if n := locker.tries.Load(); n != 1 {
		t.Fatalf("TryLock called %d times over 4 runs, want 1", n)
	}
	if n, m := lease.releases.Load(), r.calls.Load(); n != 0 || m != 4 {
		t.Fatalf("after 4 runs: %d releases (want 0), %d passes (want 4)", n, m)
	}
	requireRankCounts(t, j, rankCounts{success: 4, entries: 3})
	if err := j.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	tick.requireStopped(t)
	if n := lease.releases.Load(); n != 1 {
		t.Fatalf("Stop released %d times, want 1", n)
	}
	// Stopped for good: no more runs, no more TryLock; a second Stop does nothing.
	if o, err := j.RunOnce(t.Context()); o != job.OutcomeFailure || !errors.Is(err, job.ErrStopped) {
		t.Fatalf("RunOnce after Stop = %q, %v; want a failure with ErrStopped", o, err)
	}
	if err := j.Stop(t.Context()); err != nil || lease.releases.Load() != 1 || locker.tries.Load() != 1 {
		t.Fatalf("second Stop: %v, %d releases, %d tries", err, lease.releases.Load(), locker.tries.Load())
	}
}

// Metrics add up over runs.
func TestRankJob_MetricsAccumulate(t *testing.T) {
	t.Parallel()
	lease := &rankLease{renewed: make(chan error, 8)}
	locker := &rankLocker{ok: true, lease: lease}
	ticks := newRankTicks()
	r := newFakeRanker(rankerOpts{list: rankEntries(3)})
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: locker, Ticks: ticks})
	for range 3 {
		if _, err := j.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// The lease is lost, and another instance wins the lock.
	lease.renew = cache.ErrLockLost
	locker.set(false)
	tick := ticks.next(t)
	tick.fire(t)
	if err := testenv.Recv(t, lease.renewed, "the failed renewal", rankWait); err == nil {
		t.Fatal("the renewal meant to fail succeeded")
	}
	tick.requireStopped(t)
	if o, err := j.RunOnce(t.Context()); o != job.OutcomeNotLeader || err != nil {
		t.Fatalf("run after the lock was lost: %q, %v", o, err)
	}
	requireRankCounts(t, j, rankCounts{success: 3, notLeader: 1, entries: 3})
}

// A renewal that fails between runs ends the tenure: the job gives the lock up (it may still be
// its own: a renewal that timed out), runs no pass until it wins the lock again, and then ranks
// under a new tenure.
func TestRankJob_RenewalFailureStopsTheHolder(t *testing.T) {
	t.Parallel()
	lease := &rankLease{renewed: make(chan error, 8)}
	locker := &rankLocker{ok: true, lease: lease}
	ticks := newRankTicks()
	r := newFakeRanker(rankerOpts{list: rankEntries(2)})
	j, logs := newRankJob(t, rankJobOpts{Ranker: r, Locker: locker, Ticks: ticks})
	if o, err := j.RunOnce(t.Context()); o != job.OutcomeSuccess || err != nil {
		t.Fatalf("first run: %q, %v", o, err)
	}
	tick := ticks.next(t)
	tick.fire(t)
	if err := testenv.Recv(t, lease.renewed, "a renewal", rankWait); err != nil {
		t.Fatal(err)
	}

	lease.renew = errors.New("renew lock: i/o timeout")
	locker.set(false) // meanwhile another instance takes the lock
	tick.fire(t)
	if err := testenv.Recv(t, lease.renewed, "the failed renewal", rankWait); err == nil {
		t.Fatal("the renewal meant to fail succeeded")
	}
	tick.requireStopped(t)
	if n := lease.releases.Load(); n != 1 {
		t.Fatalf("released %d times after the failed renewal, want 1", n)
	}
	if j.Leader() {
		t.Fatal("Leader() after a failed renewal")
	}
	if !slices.Contains(logs.messages(), "ranking lock renewal failed; this instance stops ranking until it wins the lock again") {
		t.Fatalf("no warning about the failed renewal in %q", logs.messages())
	}
	for range 2 {
		if o, err := j.RunOnce(t.Context()); o != job.OutcomeNotLeader || err != nil {
			t.Fatalf("run after the failed renewal: %q, %v; want skipped", o, err)
		}
	}
	if n := r.calls.Load(); n != 1 {
		t.Fatalf("%d passes, want only the first: no pass after the lock was lost", n)
	}
	if n := locker.tries.Load(); n != 3 {
		t.Fatalf("TryLock called %d times, want 3: each run after the loss competes again", n)
	}

	// The lock is free again: the job wins it, ranks, and renews under a new tenure.
	lease.renew = nil
	locker.set(true)
	if o, err := j.RunOnce(t.Context()); o != job.OutcomeSuccess || err != nil {
		t.Fatalf("run once the lock is free: %q, %v", o, err)
	}
	next := ticks.next(t)
	next.fire(t)
	if err := testenv.Recv(t, lease.renewed, "a renewal of the new tenure", rankWait); err != nil {
		t.Fatal(err)
	}
	requireRankCounts(t, j, rankCounts{success: 2, notLeader: 2, entries: 2})
}

// A renewal that fails while a pass runs cancels the pass.
func TestRankJob_RenewalFailureCancelsTheRun(t *testing.T) {
	t.Parallel()
	lease := &rankLease{renew: cache.ErrLockLost, renewed: make(chan error, 8)}
	ticks := newRankTicks()
	r := newFakeRanker(rankerOpts{hold: true, list: rankEntries(1)})
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: &rankLocker{ok: true, lease: lease}, Ticks: ticks})
	done := runRankAsync(j, t.Context())
	testenv.Recv(t, r.entered, "the ranker to start", rankWait)
	ticks.next(t).fire(t)
	res := testenv.Recv(t, done, "the run to end", rankWait)
	if res.outcome != job.OutcomeFailure || res.err == nil || !strings.Contains(res.err.Error(), "lock lost") {
		t.Fatalf("RunOnce = %q, %v; want a failure saying the lock was lost", res.outcome, res.err)
	}
	if cerr := testenv.Recv(t, r.ctxErr, "the ranker's context to end", rankWait); !errors.Is(cerr, context.Canceled) {
		t.Fatalf("the run's context ended with %v, want context.Canceled", cerr)
	}
	if n := lease.renews.Load(); n != 1 {
		t.Fatalf("Renew called %d times, want 1: the first failure ends the run", n)
	}
	requireRankCounts(t, j, rankCounts{failure: 1})
}

// Stop during a pass cancels it, waits for it to return, then releases the lock.
func TestRankJob_StopDuringARun(t *testing.T) {
	t.Parallel()
	lease := &rankLease{}
	r := newFakeRanker(rankerOpts{hold: true, list: rankEntries(1)})
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: &rankLocker{ok: true, lease: lease}})
	done := runRankAsync(j, t.Context())
	testenv.Recv(t, r.entered, "the ranker to start", rankWait)
	if err := j.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// Stop returned: the pass had returned already (cancelled), and the lock is released.
	select {
	case cerr := <-r.ctxErr:
		if !errors.Is(cerr, context.Canceled) {
			t.Fatalf("the pass's context ended with %v, want context.Canceled", cerr)
		}
	default:
		t.Fatal("Stop returned before the pass under way did")
	}
	if n := lease.releases.Load(); n != 1 {
		t.Fatalf("released %d times, want 1", n)
	}
	if res := testenv.Recv(t, done, "the run to end", rankWait); res.outcome != job.OutcomeFailure || !errors.Is(res.err, job.ErrStopped) {
		t.Fatalf("the run stopped under it = %q, %v; want a failure with ErrStopped", res.outcome, res.err)
	}
}

// A job that never held the lock has nothing to release.
func TestRankJob_StopWithoutTheLock(t *testing.T) {
	t.Parallel()
	locker := &rankLocker{ok: false, lease: &rankLease{}}
	j, _ := newRankJob(t, rankJobOpts{Ranker: newFakeRanker(rankerOpts{}), Locker: locker})
	if o, err := j.RunOnce(t.Context()); o != job.OutcomeNotLeader || err != nil {
		t.Fatalf("RunOnce = %q, %v", o, err)
	}
	if err := j.Stop(t.Context()); err != nil || locker.lease.releases.Load() != 0 {
		t.Fatalf("Stop = %v with %d releases; want nil and none", err, locker.lease.releases.Load())
	}
}

// ---- With the real Redis lock ----

// rankRedisLocker wraps cache.Locker as inkwell.lockerAdapter does, and records for the test the token
// each lease wrote and each renewal.
type rankRedisLocker struct {
	l       *cache.Locker
	rdb     redis.UniversalClient
	ks      cache.Keyspace
	held    atomic.Pointer[rankHeld]
	renewed chan rankRenewal
}

// rankHeld is the lease the job took: the token it wrote, and when it asked for it.
type rankHeld struct {
	token string
	at    time.Time
}

// rankRenewal is one renewal the job made: its result, when the call started and when it returned.
type rankRenewal struct {
	err       error
	start, at time.Time
}

func (a *rankRedisLocker) TryLock(ctx context.Context, name string, ttl time.Duration) (job.Lease, bool, error) {
	at := time.Now()
	lk, ok, err := a.l.TryLock(ctx, name, ttl)
	if err != nil || !ok {
		return nil, ok, err
	}
	tok, err := a.rdb.Get(ctx, a.ks.Key("lock", name)).Result()
	if err != nil {
		return nil, false, err
	}
	a.held.Store(&rankHeld{token: tok, at: at})
	return &rankObservedLease{Lock: lk, renewed: a.renewed}, true, nil
}

type rankObservedLease struct {
	*cache.Lock
	renewed chan rankRenewal
}

func (l *rankObservedLease) Renew(ctx context.Context) error {
	start := time.Now()
	err := l.Lock.Renew(ctx)
	select {
	case l.renewed <- rankRenewal{err, start, time.Now()}:
	default: // nobody is counting any more
	}
	return err
}

type rankRedisEnv struct {
	rdb    redis.UniversalClient
	key    string
	locker *rankRedisLocker
	other  *cache.Locker // another instance's locker on the same keys
}

func newRankRedisEnv(t *testing.T) *rankRedisEnv {
	t.Helper()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	return &rankRedisEnv{
		rdb:    r.Client,
		key:    ks.Key("lock", rankLockName),
		locker: &rankRedisLocker{l: cache.NewLocker(r.Client, ks), rdb: r.Client, ks: ks, renewed: make(chan rankRenewal, 64)},
		other:  cache.NewLocker(testenv.NewRedis(t).Client, ks),
	}
}

// instance returns another instance's locker on the same keys, through a client of its own.
func (e *rankRedisEnv) instance(t *testing.T) *rankRedisLocker {
	t.Helper()
	ks := cache.Keyspace(strings.TrimSuffix(e.key, "lock:"+rankLockName))
	rdb := testenv.NewRedis(t).Client
	return &rankRedisLocker{l: cache.NewLocker(rdb, ks), rdb: rdb, ks: ks, renewed: make(chan rankRenewal, 64)}
}

func (e *rankRedisEnv) value(t *testing.T) string {
	t.Helper()
	v, err := e.rdb.Get(context.Background(), e.key).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type rankRunResult struct {
	outcome job.Outcome
	err     error
}

func runRankAsync(j *job.RankJob, ctx context.Context) <-chan rankRunResult {
	ch := make(chan rankRunResult, 1)
	go func() {
		o, err := j.RunOnce(ctx)
		ch <- rankRunResult{o, err}
	}()
	return ch
}

func TestRankJob_RenewalKeepsTheLockThroughALongRun(t *testing.T) {
	t.Parallel()
	// A lease of a second, renewed every third of it. A renewal that fails less than a lease
	// after the previous one is a bug; one that fails later only means this test process was
	// stalled past the lease (it happens on an overloaded machine), and the attempt is repeated.
	const ttl = time.Second
	for attempt := 1; ; attempt++ {
		stall := renewalKeepsTheLock(t, ttl)
		if stall == 0 {
			return
		}
		if attempt == 3 {
			t.Fatalf("the test process stalled past the lease in %d attempts in a row", attempt)
		}
		t.Logf("attempt %d: no renewal for %v, longer than the lease; trying again", attempt, stall)
	}
}

// renewalKeepsTheLock runs the job with a ranker that outlives three leases and checks that the
// lock stays its own throughout. It returns the gap between renewals when the lock was lost to a
// stall of the test process, else 0.
func renewalKeepsTheLock(t *testing.T, ttl time.Duration) time.Duration {
	t.Helper()
	e := newRankRedisEnv(t)
	r := newFakeRanker(rankerOpts{hold: true, list: rankEntries(4)})
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: e.locker, LockTTL: ttl, Timeout: 30 * time.Second, WallClock: true})
	defer func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
	}()

	done := runRankAsync(j, t.Context())
	testenv.Recv(t, r.entered, "the ranker to start", rankWait)
	held := e.locker.held.Load()
	// The lease runs at least ttl from when the last successful call (TryLock or Renew) started;
	// a later renewal that returns ErrLockLost earlier than that found its own lease gone.
	last := held.at
	// Ten renewals, one every third of the lease: the run has outlived three leases.
	for i := range 10 {
		rn := testenv.Recv(t, e.locker.renewed, "a renewal", rankWait)
		if rn.err != nil {
			gap := rn.at.Sub(last)
			if gap < ttl*9/10 {
				t.Fatalf("renewal %d failed %v after the previous one, within the lease: %v", i+1, gap, rn.err)
			}
			if res := testenv.Recv(t, done, "the run to end", rankWait); res.outcome != job.OutcomeFailure {
				t.Fatalf("lost the lock, yet RunOnce = %q, %v", res.outcome, res.err)
			}
			return gap
		}
		last = rn.start
	}
	if d := time.Since(held.at); d < 3*ttl {
		t.Fatalf("ten renewals took only %v, less than three leases", d)
	}
	if v := e.value(t); v != held.token {
		t.Fatalf("mid-run the lock holds %q, want our token %q", v, held.token)
	}
	if d, err := e.rdb.PTTL(t.Context(), e.key).Result(); err != nil || d <= 0 || d > ttl {
		t.Fatalf("mid-run PTTL = %v (%v), want within (0, %v]", d, err, ttl)
	}
	if _, ok, err := e.other.TryLock(t.Context(), rankLockName, ttl); ok || err != nil {
		t.Fatalf("another instance's TryLock mid-run: ok=%v err=%v, want not ok", ok, err)
	}
	close(r.release)
	res := testenv.Recv(t, done, "the run to end", rankWait)
	if res.outcome != job.OutcomeSuccess || res.err != nil {
		t.Fatalf("RunOnce = %q, %v; want success", res.outcome, res.err)
	}
	if v := e.value(t); v != held.token {
		t.Fatalf("after the run the lock holds %q, want our token %q: it is kept between runs", v, held.token)
	}
	requireRankCounts(t, j, rankCounts{success: 1, entries: 4})
	if err := j.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v := e.value(t); v != "" {
		t.Fatalf("the lock still holds %q after Stop", v)
	}
	return 0
}

func TestRankJob_LosingTheLockCancelsTheRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		takeAway  func(t *testing.T, e *rankRedisEnv) // makes the next renewal fail with ErrLockLost
		wantAfter string                              // what the key holds after the run
	}{
		{
			name: "the lock key is deleted",
			takeAway: func(t *testing.T, e *rankRedisEnv) {
				if err := e.rdb.Del(t.Context(), e.key).Err(); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "another holder overwrote the lock",
			takeAway: func(t *testing.T, e *rankRedisEnv) {
				if err := e.rdb.Set(t.Context(), e.key, "usurper", time.Minute).Err(); err != nil {
					t.Fatal(err)
				}
			},
			wantAfter: "usurper",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newRankRedisEnv(t)
			ticks := newRankTicks()
			r := newFakeRanker(rankerOpts{hold: true, list: rankEntries(2)})
			j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: e.locker, Ticks: ticks, Timeout: 10 * time.Second})

			done := runRankAsync(j, t.Context())
			testenv.Recv(t, r.entered, "the ranker to start", rankWait)
			tc.takeAway(t, e) // mid-run, before the first renewal
			tick := ticks.next(t)
			tick.fire(t)
			if rn := testenv.Recv(t, e.locker.renewed, "the first renewal", rankWait); !errors.Is(rn.err, cache.ErrLockLost) {
				t.Fatalf("the first renewal after the lock was taken away returned %v, want ErrLockLost", rn.err)
			}
			res := testenv.Recv(t, done, "the run to end", rankWait)
			if res.outcome != job.OutcomeFailure || res.err == nil || !strings.Contains(res.err.Error(), "lock lost") {
				t.Fatalf("RunOnce = %q, %v; want a failure saying the lock was lost", res.outcome, res.err)
			}
			if cerr := testenv.Recv(t, r.ctxErr, "the ranker's context to end", rankWait); !errors.Is(cerr, context.Canceled) {
				t.Fatalf("the run's context ended with %v, want context.Canceled", cerr)
			}
			tick.requireStopped(t) // the job has given the lock up, as far as it is its own
			if v := e.value(t); v != tc.wantAfter {
				t.Fatalf("after the run the key holds %q, want %q: the loser must not touch it", v, tc.wantAfter)
			}
			requireRankCounts(t, j, rankCounts{failure: 1})
		})
	}
}

// rankInstance is one instance's ranking job on the shared Redis lock, with its renewal ticks.
type rankInstance struct {
	job    *job.RankJob
	ranker *fakeRanker
	locker *rankRedisLocker
	ticks  *rankTicks
}

func newRankInstance(t *testing.T, locker *rankRedisLocker) *rankInstance {
	t.Helper()
	i := &rankInstance{ranker: newFakeRanker(rankerOpts{list: rankEntries(5)}), locker: locker, ticks: newRankTicks()}
	i.job, _ = newRankJob(t, rankJobOpts{Ranker: i.ranker, Locker: locker, Ticks: i.ticks})
	return i
}

func (i *rankInstance) run(t *testing.T, want job.Outcome) {
	t.Helper()
	if o, err := i.job.RunOnce(t.Context()); o != want || err != nil {
		t.Fatalf("RunOnce = %q, %v; want %q", o, err, want)
	}
}

// renew fires one renewal of the instance's current tenure and returns its result.
func (i *rankInstance) renew(t *testing.T, tick *manualTicker) error {
	t.Helper()
	tick.fire(t)
	return testenv.Recv(t, i.locker.renewed, "a renewal", rankWait).err
}

// Two instances on one Redis lock: the first to win it ranks at every tick and renews it between
// runs; the other skips every tick while the first lives. Once the first stops, the other takes
// over at its next tick.
func TestRankJob_OneInstanceRanksUntilItStops(t *testing.T) {
	t.Parallel()
	e := newRankRedisEnv(t)
	a, b := newRankInstance(t, e.locker), newRankInstance(t, e.instance(t))

	a.run(t, job.OutcomeSuccess)
	aTick := a.ticks.next(t)
	token := a.locker.held.Load().token
	for round := range 3 {
		b.run(t, job.OutcomeNotLeader)
		b.run(t, job.OutcomeNotLeader)
		// Between a's runs the lease is renewed to its whole TTL.
		if err := e.rdb.PExpire(t.Context(), e.key, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if err := a.renew(t, aTick); err != nil {
			t.Fatalf("round %d: renewal: %v", round, err)
		}
		if d, err := e.rdb.PTTL(t.Context(), e.key).Result(); err != nil || d <= 59*time.Minute {
			t.Fatalf("round %d: PTTL after a renewal = %v (%v), want about the 1h lease", round, d, err)
		}
		a.run(t, job.OutcomeSuccess)
		if v := e.value(t); v != token {
			t.Fatalf("round %d: the lock holds %q, want a's token %q throughout", round, v, token)
		}
	}
	a.ticks.requireNone(t)
	if n := b.ranker.calls.Load(); n != 0 {
		t.Fatalf("the other instance ranked %d times while the first held the lock", n)
	}
	requireRankCounts(t, a.job, rankCounts{success: 4, entries: 5})
	requireRankCounts(t, b.job, rankCounts{notLeader: 6})
	if !a.job.Leader() || b.job.Leader() {
		t.Fatalf("Leader(): a %v, b %v; want a only", a.job.Leader(), b.job.Leader())
	}

	// a stops (its App shuts down): the lock is free at once, and b takes it at its next tick.
	if err := a.job.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	aTick.requireStopped(t)
	if v := e.value(t); v != "" {
		t.Fatalf("after Stop the lock holds %q", v)
	}
	b.run(t, job.OutcomeSuccess)
	b.run(t, job.OutcomeSuccess)
	if v := e.value(t); v != b.locker.held.Load().token {
		t.Fatalf("the lock holds %q, want b's token", v)
	}
	if o, err := a.job.RunOnce(t.Context()); !errors.Is(err, job.ErrStopped) {
		t.Fatalf("the stopped instance's RunOnce = %q, %v; want ErrStopped", o, err)
	}
	requireRankCounts(t, b.job, rankCounts{success: 2, notLeader: 6, entries: 5})
}

// A holder that dies (or stalls past its lease) keeps nothing: once the lease has expired another
// instance wins the lock at its next tick. If the old holder comes back, its next renewal fails,
// it steps down without touching the new holder's lock, and skips from then on.
func TestRankJob_TakeoverAfterTheHolderLeaseExpires(t *testing.T) {
	t.Parallel()
	e := newRankRedisEnv(t)
	a, b := newRankInstance(t, e.locker), newRankInstance(t, e.instance(t))
	a.run(t, job.OutcomeSuccess)
	aTick := a.ticks.next(t)
	b.run(t, job.OutcomeNotLeader)

	// a's lease expires: it renewed no more (the test fires none of its ticks).
	if err := e.rdb.Del(t.Context(), e.key).Err(); err != nil {
		t.Fatal(err)
	}
	b.run(t, job.OutcomeSuccess)
	newToken := b.locker.held.Load().token

	// a wakes up: its renewal finds the lock taken over.
	if err := a.renew(t, aTick); !errors.Is(err, cache.ErrLockLost) {
		t.Fatalf("the old holder's renewal = %v, want ErrLockLost", err)
	}
	aTick.requireStopped(t)
	if v := e.value(t); v != newToken {
		t.Fatalf("after the old holder stepped down the lock holds %q, want the new holder's %q", v, newToken)
	}
	a.run(t, job.OutcomeNotLeader)
	b.run(t, job.OutcomeSuccess)
	requireRankCounts(t, a.job, rankCounts{success: 1, notLeader: 1, entries: 5})
	requireRankCounts(t, b.job, rankCounts{success: 2, notLeader: 1, entries: 5})
}
