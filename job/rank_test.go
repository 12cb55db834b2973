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

// rankLease records its releases; renew is its answer to Renew.
type rankLease struct {
	renew    error
	renews   atomic.Int64
	releases atomic.Int64
}

func (l *rankLease) Renew(context.Context) error { l.renews.Add(1); return l.renew }

func (l *rankLease) Release(context.Context) error { l.releases.Add(1); return nil }

// rankLocker answers TryLock with ok/err and hands out lease.
type rankLocker struct {
	ok    bool
	err   error
	lease *rankLease
	tries atomic.Int64
}

func (l *rankLocker) TryLock(_ context.Context, name string, _ time.Duration) (job.Lease, bool, error) {
	l.tries.Add(1)
	if name != rankLockName {
		return nil, false, errors.New("unexpected lock name " + name)
	}
	if l.err != nil || !l.ok {
		return nil, false, l.err
	}
	return l.lease, true, nil
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
	Ranker  *fakeRanker
	Locker  job.Locker
	LockTTL time.Duration // default 1h
	Timeout time.Duration // default 30s
}

func newRankJob(t *testing.T, o rankJobOpts) (*job.RankJob, *rankLogs) {
	t.Helper()
	if o.LockTTL == 0 {
		o.LockTTL = time.Hour
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	logs := &rankLogs{}
	clock := &rankClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), step: rankStep}
	return job.NewRankJob(o.Ranker, o.Locker, job.RankJobConfig{LockTTL: o.LockTTL, Timeout: o.Timeout}, slog.New(logs), clock.Now), logs
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
		wantRelease int64
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
			name:        "a pass: success, the list size recorded, the lock released",
			ranker:      rankerOpts{list: rankEntries(7)},
			locker:      &rankLocker{ok: true, lease: &rankLease{}},
			wantOutcome: job.OutcomeSuccess,
			wantRanks:   1,
			wantRelease: 1,
			wantMetrics: rankCounts{success: 1, entries: 7},
			wantLogs:    []string{"ranking run started", "ranking run finished success"},
		},
		{
			name:        "the pass fails: a failure, the lock released",
			ranker:      rankerOpts{err: errRankPass},
			locker:      &rankLocker{ok: true, lease: &rankLease{}},
			wantOutcome: job.OutcomeFailure,
			wantErr:     "connection reset",
			wantRanks:   1,
			wantRelease: 1,
			wantMetrics: rankCounts{failure: 1},
			wantLogs:    []string{"ranking run started", "ranking run failed; the previous hot list stays failure"},
		},
		{
			name:        "the pass outlives its timeout: cancelled, a failure",
			ranker:      rankerOpts{hold: true},
			locker:      &rankLocker{ok: true, lease: &rankLease{}},
			timeout:     time.Nanosecond,
			wantOutcome: job.OutcomeFailure,
			wantErr:     context.DeadlineExceeded.Error(),
			wantRanks:   1,
			wantRelease: 1,
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
			if tc.locker.lease != nil {
				if n := tc.locker.lease.releases.Load(); n != tc.wantRelease {
					t.Fatalf("lease released %d times, want %d", n, tc.wantRelease)
				}
			}
			requireRankCounts(t, j, tc.wantMetrics)
			if tc.wantLogs != nil {
				if got := logs.messages(); !slices.Equal(got, tc.wantLogs) {
					t.Fatalf("logs %q, want %q", got, tc.wantLogs)
				}
			}
		})
	}
}

// Metrics add up over runs.
func TestRankJob_MetricsAccumulate(t *testing.T) {
	t.Parallel()
	locker := &rankLocker{ok: true, lease: &rankLease{}}
	r := newFakeRanker(rankerOpts{list: rankEntries(3)})
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: locker})
	for range 3 {
		if _, err := j.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	locker.ok = false
	if _, err := j.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	requireRankCounts(t, j, rankCounts{success: 3, notLeader: 1, entries: 3})
}

// A failing renewal of a fake lease cancels the run.
func TestRankJob_RenewalFailureCancelsTheRun(t *testing.T) {
	t.Parallel()
	lease := &rankLease{renew: cache.ErrLockLost}
	r := newFakeRanker(rankerOpts{hold: true, list: rankEntries(1)})
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: &rankLocker{ok: true, lease: lease}, LockTTL: 30 * time.Millisecond, Timeout: 10 * time.Second})
	outcome, err := j.RunOnce(t.Context())
	if outcome != job.OutcomeFailure || err == nil || !strings.Contains(err.Error(), "lock lost") {
		t.Fatalf("RunOnce = %q, %v; want a failure saying the lock was lost", outcome, err)
	}
	if cerr := rankRecv(t, r.ctxErr, "the ranker's context to end"); !errors.Is(cerr, context.Canceled) {
		t.Fatalf("the run's context ended with %v, want context.Canceled", cerr)
	}
	if n := lease.renews.Load(); n != 1 {
		t.Fatalf("Renew called %d times, want 1: the first failure ends the run", n)
	}
	requireRankCounts(t, j, rankCounts{failure: 1})
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

// rankRecv waits for one value from ch, failing the test rather than hanging.
func rankRecv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
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
	j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: e.locker, LockTTL: ttl, Timeout: 30 * time.Second})
	defer func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
	}()

	done := runRankAsync(j, t.Context())
	rankRecv(t, r.entered, "the ranker to start")
	held := e.locker.held.Load()
	// The lease runs at least ttl from when the last successful call (TryLock or Renew) started;
	// a later renewal that returns ErrLockLost earlier than that found its own lease gone.
	last := held.at
	// Ten renewals, one every third of the lease: the run has outlived three leases.
	for i := range 10 {
		rn := rankRecv(t, e.locker.renewed, "a renewal")
		if rn.err != nil {
			gap := rn.at.Sub(last)
			if gap < ttl*9/10 {
				t.Fatalf("renewal %d failed %v after the previous one, within the lease: %v", i+1, gap, rn.err)
			}
			if res := rankRecv(t, done, "the run to end"); res.outcome != job.OutcomeFailure {
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
	res := rankRecv(t, done, "the run to end")
	if res.outcome != job.OutcomeSuccess || res.err != nil {
		t.Fatalf("RunOnce = %q, %v; want success", res.outcome, res.err)
	}
	if v := e.value(t); v != "" {
		t.Fatalf("the lock still holds %q after the run", v)
	}
	requireRankCounts(t, j, rankCounts{success: 1, entries: 4})
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
			const ttl = 600 * time.Millisecond
			e := newRankRedisEnv(t)
			r := newFakeRanker(rankerOpts{hold: true, list: rankEntries(2)})
			j, _ := newRankJob(t, rankJobOpts{Ranker: r, Locker: e.locker, LockTTL: ttl, Timeout: 10 * time.Second})

			done := runRankAsync(j, t.Context())
			rankRecv(t, r.entered, "the ranker to start")
			tc.takeAway(t, e) // mid-run, before the first renewal
			if rn := rankRecv(t, e.locker.renewed, "the first renewal"); !errors.Is(rn.err, cache.ErrLockLost) {
				t.Fatalf("the first renewal after the lock was taken away returned %v, want ErrLockLost", rn.err)
			}
			res := rankRecv(t, done, "the run to end")
			if res.outcome != job.OutcomeFailure || res.err == nil || !strings.Contains(res.err.Error(), "lock lost") {
				t.Fatalf("RunOnce = %q, %v; want a failure saying the lock was lost", res.outcome, res.err)
			}
			if cerr := rankRecv(t, r.ctxErr, "the ranker's context to end"); !errors.Is(cerr, context.Canceled) {
				t.Fatalf("the run's context ended with %v, want context.Canceled", cerr)
			}
			if v := e.value(t); v != tc.wantAfter {
				t.Fatalf("after the run the key holds %q, want %q: the loser must not touch it", v, tc.wantAfter)
			}
			requireRankCounts(t, j, rankCounts{failure: 1})
		})
	}
}
