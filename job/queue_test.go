package job_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// These tests run the job runner against the real PostgreSQL queue (TEST_DATABASE_URL). Each
// top-level test gets a database of its own; subtests that share one use queues of their own and
// never reap (a reap is not per queue), so they cannot touch each other's jobs.

// ---- fixtures ---------------------------------------------------------------------------------

// queueEnv is a migrated database with its job queue.
type queueEnv struct {
	db    *testenv.DB
	pool  *pgxpool.Pool
	queue *durable.JobQueue
}

// newQueueEnv migrates a database and opens a pool of maxConns connections on it (the default
// pool, max(4, CPUs), is too small for eight workers, their lease renewals and a listener).
func newQueueEnv(t testing.TB, maxConns int32) *queueEnv {
	t.Helper()
	db := testenv.NewDB(t)
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = maxConns
	pg.PlanStatementsOnce(cfg)
	// INKWELL_TEST_SYNCHRONOUS_COMMIT=off shows how much of the queue's cost is waiting for WAL
	// flushes (a diagnostic for BenchmarkQueueThroughput; never the default).
	if v := os.Getenv("INKWELL_TEST_SYNCHRONOUS_COMMIT"); v != "" {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = v
	}
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &queueEnv{db: db, pool: pool, queue: durable.NewJobQueue(durable.QueuePool{Pool: pool}, dao.New())}
}

// jobOpts are the fields of a job to enqueue; empty ones get defaults.
type jobOpts struct {
	Queue       string // required
	Kind        string // empty: "work"
	Payload     string // JSON; empty: {}
	MaxAttempts int    // zero: the queue's default
	UniqueKey   string
}

// enqueue adds a job through the real enqueue path and returns its id.
func (e *queueEnv) enqueue(t testing.TB, o jobOpts) int64 {
	t.Helper()
	if o.Kind == "" {
		o.Kind = "work"
	}
	added, err := e.queue.Enqueue(context.Background(), domain.NewJob{
		Queue: o.Queue, Kind: o.Kind, Payload: []byte(o.Payload), MaxAttempts: o.MaxAttempts, UniqueKey: o.UniqueKey,
	})
	if err != nil || !added {
		t.Fatalf("enqueue %+v: added=%v err=%v", o, added, err)
	}
	var id int64
	if err := e.pool.QueryRow(context.Background(), "SELECT max(id) FROM jobs WHERE queue = $1 AND kind = $2", o.Queue, o.Kind).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *queueEnv) get(t testing.TB, id int64) domain.Job {
	t.Helper()
	j, err := e.queue.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get job %d: %v", id, err)
	}
	return j
}

// count runs a query returning one bigint.
func (e *queueEnv) count(t testing.TB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := e.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// queueClock is an injected clock that moves only when told to (the outbox relay's tests use it;
// the job queue takes its time from the database).
type queueClock struct {
	mu sync.Mutex
	t  time.Time
}

// newQueueClock starts a fake clock at the next whole millisecond: never before the real time a
// job enqueued just before was stamped with (truncating to the millisecond could put the clock
// before it, and the job would not be claimable until the clock moved).
func newQueueClock() *queueClock {
	return &queueClock{t: time.Now().Truncate(time.Millisecond).Add(time.Millisecond)}
}

func (c *queueClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *queueClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// retryDueNow checks that a failed job's retry was stamped retryAfter after the failure by the
// database's clock, then moves it to now, as if the backoff had passed (the queue takes time only
// from the database, which a test cannot move). It runs in the runner's goroutines: no Fatal.
func (e *queueEnv) retryDueNow(t testing.TB, id int64, retryAfter time.Duration) {
	var status string
	var exact bool
	if err := e.pool.QueryRow(context.Background(),
		`SELECT status, available_at - updated_at = make_interval(secs => $2::float8) FROM jobs WHERE id = $1`,
		id, retryAfter.Seconds()).Scan(&status, &exact); err != nil {
		t.Errorf("read the failed job %d: %v", id, err)
		return
	}
	if status != string(domain.JobReady) {
		return // buried: there is no retry
	}
	if !exact {
		t.Errorf("job %d: the retry is not due %v after the failure by the database's clock", id, retryAfter)
	}
	if _, err := e.pool.Exec(context.Background(), `UPDATE jobs SET available_at = now() - interval '1 second' WHERE id = $1`, id); err != nil {
		t.Errorf("move job %d's retry to now: %v", id, err)
	}
}

// hookedStore is the real queue with hooks around its calls, to observe and perturb a runner.
// Hooks must be set before the runner starts.
type hookedStore struct {
	job.JobStore
	afterClaim func(ctx context.Context, jobs []domain.Job, err error)
	beforeAck  func(ctx context.Context, id int64) error // a non-nil error is returned instead of acking
	afterAck   func(ctx context.Context, id int64, ok bool, err error)
	afterFail  func(id int64, lastErr string, permanent bool, retryAfter time.Duration, ok bool)
	// beforeCycle sees every AckAndClaim call's arguments.
	beforeCycle func(done []domain.Job, c domain.JobClaim)
}

// AckAndClaim runs beforeAck for every job to acknowledge (any error aborts the whole call, as a
// failed transaction would), then the real call, then afterAck per job and afterClaim.
func (s *hookedStore) AckAndClaim(ctx context.Context, done []domain.Job, c domain.JobClaim) ([]bool, []domain.Job, error) {
	if s.beforeCycle != nil {
		s.beforeCycle(done, c)
	}
	if s.beforeAck != nil {
		for _, j := range done {
			if err := s.beforeAck(ctx, j.ID); err != nil {
				return nil, nil, err
			}
		}
	}
	acked, jobs, err := s.JobStore.AckAndClaim(ctx, done, c)
	if s.afterAck != nil {
		for i, j := range done {
			s.afterAck(ctx, j.ID, err == nil && acked[i], err)
		}
	}
	if s.afterClaim != nil && c.Limit > 0 {
		s.afterClaim(ctx, jobs, err)
	}
	return acked, jobs, err
}

func (s *hookedStore) Fail(ctx context.Context, id, generation int64, lastErr string, permanent bool, retryAfter time.Duration) (bool, error) {
	ok, err := s.JobStore.Fail(ctx, id, generation, lastErr, permanent, retryAfter)
	if s.afterFail != nil && err == nil {
		s.afterFail(id, lastErr, permanent, retryAfter, ok)
	}
	return ok, err
}

// runnerOpts configure a runner under test; zero fields get defaults.
type runnerOpts struct {
	Queue       string // required
	Owner       string // empty: "owner-<queue>"
	Concurrency int    // zero: 1
	Lease       time.Duration
	Poll        time.Duration // zero: an hour, so only claims right after work or a wake-up find jobs
	BackoffBase time.Duration
	BackoffMax  time.Duration
	Grace       time.Duration // zero: a minute; negative: none at all
	AckWait     time.Duration // zero: the runner's default
	Observer    job.JobObserver
}

func newRunner(t testing.TB, store job.JobStore, o runnerOpts, handlers map[string]job.JobHandler) *job.Runner {
	t.Helper()
	if o.Owner == "" {
		o.Owner = "owner-" + o.Queue
	}
	if o.Concurrency == 0 {
		o.Concurrency = 1
	}
	if o.Lease == 0 {
		o.Lease = time.Minute
	}
	if o.Poll == 0 {
		o.Poll = time.Hour
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = time.Second
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = time.Minute
	}
	switch {
	case o.Grace == 0:
		o.Grace = time.Minute
	case o.Grace < 0:
		o.Grace = 0
	}
	return job.NewRunner(store, job.QueueConfig{
		Queue: o.Queue, Concurrency: o.Concurrency, Lease: o.Lease, Poll: o.Poll,
		Retry: domain.RetryPolicy{Base: o.BackoffBase, Max: o.BackoffMax}, Grace: o.Grace, AckWait: o.AckWait, Observer: o.Observer,
	}, handlers, o.Owner, testenv.Logger(t))
}

// runInBackground runs r until the returned stop is called (or the test ends); stop waits for
// Run to return.
func runInBackground(t testing.TB, r interface{ Run(context.Context) error }) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(ctx); err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// ---- 1. workers killed at random points -------------------------------------------------------

// workerLife is one incarnation of a worker: killing it cancels its context with nothing
// acknowledged. onKill, when set, runs first (e.g. to let the dead worker's leases run out).
type workerLife struct {
	cancel context.CancelFunc
	onKill func()
}

func (l *workerLife) kill() {
	if l.onKill != nil {
		l.onKill()
	}
	l.cancel()
}

// killSchedule decides, from one seeded source, where workers die; it stops killing after a budget.
type killSchedule struct {
	mu     sync.Mutex
	rnd    *rand.Rand
	p      float64 // probability of a kill at each kill point
	budget int
	kills  map[string]int // by kill point
}

func (c *killSchedule) strike(point string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.budget == 0 || c.rnd.Float64() >= c.p {
		return false
	}
	c.budget--
	c.kills[point]++
	return true
}

func (c *killSchedule) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.kills {
		n += k
	}
	return n
}

// TestRunnersSurviveRandomKills runs 10,000 jobs on eight single-slot runners (and 1,000 on two
// four-slot runners, which claim in batches and run several jobs per worker) that are killed —
// their context cancelled, with no grace and nothing acknowledged — at random points: right after
// a claim, before a handler's effect, after the effect but before the ack, instead of the ack and
// right after it. Killed workers restart under a new owner, and the reaper returns their leases.
// Every job must end done with its effect applied exactly once (and acknowledged once), or dead
// after its attempts; none may be left running or ready.
func TestRunnersSurviveRandomKills(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                       string
		jobs, runners, concurrency int
	}{
		{name: "8_runners_x1", jobs: 10_000, runners: 8, concurrency: 1},
		{name: "2_runners_x4", jobs: 1_000, runners: 2, concurrency: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testKillChaos(t, tc.jobs, tc.runners, tc.concurrency)
		})
	}
}

func testKillChaos(t *testing.T, jobs, runners, concurrency int) {
	const lease = time.Second
	e := newQueueEnv(t, 24)
	ctx := context.Background()
	if _, err := e.pool.Exec(ctx, `CREATE TABLE effects (job_id BIGINT PRIMARY KEY, generation BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// Every 50th job fails on every run and has three attempts; the rest succeed and have plenty,
	// so that only an absurd streak of kills could bury one.
	if _, err := e.pool.Exec(ctx, `
		INSERT INTO jobs (queue, kind, payload, max_attempts)
		SELECT 'chaos', CASE WHEN g % 50 = 0 THEN 'doomed' ELSE 'work' END, jsonb_build_object('n', g),
		       CASE WHEN g % 50 = 0 THEN 3 ELSE 25 END
		FROM generate_series(1, $1::int) g`, jobs); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	t.Logf("chaos seed %d", seed)
	ch := &killSchedule{rnd: rand.New(rand.NewPCG(uint64(seed), 0x6a6f6273)), p: 0.004, budget: 300, kills: map[string]int{}}

	var executions sync.Map // job id → *atomic.Int32
	var acked atomic.Int64  // successful (fenced) acks over all lives of all workers
	var unsure atomic.Int64 // acks that returned an error: they may or may not have committed
	var lives atomic.Int64
	executed := func(id int64) {
		v, _ := executions.LoadOrStore(id, new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
	}

	// dieWith kills the life and returns what its handler returns when it is cancelled.
	dieWith := func(ctx context.Context, l *workerLife) error {
		l.kill()
		<-ctx.Done() // no grace: the handler's context ends as the runner stops
		return ctx.Err()
	}
	handlers := func(l *workerLife) map[string]job.JobHandler {
		return map[string]job.JobHandler{
			"work": func(ctx context.Context, j domain.Job) error {
				executed(j.ID)
				if ch.strike("before effect") {
					return dieWith(ctx, l)
				}
				if _, err := e.pool.Exec(ctx, `INSERT INTO effects (job_id, generation) VALUES ($1, $2) ON CONFLICT (job_id) DO NOTHING`, j.ID, j.Generation); err != nil {
					return err
				}
				if ch.strike("after effect, before ack") {
					return dieWith(ctx, l)
				}
				return nil
			},
			"doomed": func(ctx context.Context, j domain.Job) error {
				executed(j.ID)
				if ch.strike("doomed run") {
					return dieWith(ctx, l)
				}
				return errors.New("doomed: fails every time")
			},
		}
	}
	store := func(l *workerLife) job.JobStore {
		return &hookedStore{
			JobStore: e.queue,
			afterClaim: func(_ context.Context, got []domain.Job, err error) {
				if err == nil && len(got) > 0 && ch.strike("after claim") {
					l.kill()
				}
			},
			beforeAck: func(context.Context, int64) error {
				if ch.strike("in ack") {
					l.kill()
					return errors.New("killed before the ack reached the database")
				}
				return nil
			},
			afterAck: func(_ context.Context, _ int64, ok bool, err error) {
				switch {
				case err != nil:
					unsure.Add(1)
				case ok:
					acked.Add(1)
				}
				if ch.strike("after ack") {
					l.kill()
				}
			},
		}
	}

	root, stopAll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range runners {
		wg.Go(func() {
			for n := 0; root.Err() == nil; n++ {
				lctx, cancel := context.WithCancel(root)
				l := &workerLife{cancel: cancel}
				lives.Add(1)
				r := newRunner(t, store(l), runnerOpts{
					Queue: "chaos", Owner: fmt.Sprintf("worker-%d-life-%d", w, n), Concurrency: concurrency, Lease: lease, Poll: 20 * time.Millisecond,
					BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, Grace: -1,
				}, handlers(l))
				_ = r.Run(lctx)
				cancel()
			}
		})
	}
	reaper := job.NewReaper(e.queue, 50*time.Millisecond, testenv.Logger(t))
	stopReaper := runInBackground(t, reaper)

	began := time.Now()
	// 30–50 s for the 10,000 jobs on a busy two-core machine; the deadline leaves room for a slower one.
	testenv.WaitUntil(t, "every job is done or dead", func() bool {
		return e.count(t, `SELECT count(*) FROM jobs WHERE status IN ('done', 'dead')`) == int64(jobs)
	}, 3*time.Minute)
	elapsed := time.Since(began)
	stopAll()
	wg.Wait()
	stopReaper()

	statuses := map[string]int64{}
	rows, err := e.pool.Query(ctx, `SELECT kind || '/' || status, count(*) FROM jobs GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		statuses[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var runs, repeated int64
	executions.Range(func(_, v any) bool {
		n := int64(v.(*atomic.Int32).Load())
		runs += n
		if n > 1 {
			repeated++
		}
		return true
	})
	t.Logf("%d jobs in %v over %d worker lives; %d handler runs (%d jobs ran more than once); kills %v; statuses %v",
		jobs, elapsed.Round(time.Millisecond), lives.Load(), runs, repeated, ch.kills, statuses)

	t.Run("none_left_running_or_ready", func(t *testing.T) {
		if n := e.count(t, `SELECT count(*) FROM jobs WHERE status IN ('running', 'ready')`); n != 0 {
			t.Fatalf("%d jobs still running or ready", n)
		}
	})
	t.Run("work_done_with_its_effect_exactly_once", func(t *testing.T) {
		// A work job is done; it is dead only when kills used up every one of its attempts.
		if n := e.count(t, `SELECT count(*) FROM jobs WHERE kind = 'work' AND NOT (status = 'done' OR (status = 'dead' AND attempts = max_attempts))`); n != 0 {
			t.Fatalf("%d work jobs neither done nor dead after their attempts", n)
		}
		if n := e.count(t, `SELECT count(*) FROM jobs j WHERE j.status = 'done' AND (SELECT count(*) FROM effects e WHERE e.job_id = j.id) <> 1`); n != 0 {
			t.Fatalf("%d done jobs without exactly one effect", n)
		}
		if n := e.count(t, `SELECT count(*) FROM effects e JOIN jobs j ON j.id = e.job_id WHERE j.kind <> 'work'`); n != 0 {
			t.Fatalf("%d effects of jobs that never succeed", n)
		}
		// A single-slot worker is never killed while its ack is in flight, so every ack's outcome
		// is known; a multi-slot worker may be killed by one job while another's ack runs.
		done := e.count(t, `SELECT count(*) FROM jobs WHERE status = 'done'`)
		if got := acked.Load(); got > done || done > got+unsure.Load() || (concurrency == 1 && got != done) {
			t.Fatalf("%d successful acks (and %d with unknown outcome) for %d done jobs: a job was acknowledged twice, or done without an ack",
				got, unsure.Load(), done)
		}
		if done < int64(jobs-jobs/50-5) {
			t.Fatalf("only %d jobs done", done)
		}
	})
	t.Run("doomed_dead_after_every_attempt", func(t *testing.T) {
		if n := e.count(t, `SELECT count(*) FROM jobs WHERE kind = 'doomed' AND NOT (status = 'dead' AND attempts = 3 AND last_error <> '')`); n != 0 {
			t.Fatalf("%d doomed jobs not dead after 3 attempts with their last error", n)
		}
	})
	t.Run("every_job_ran", func(t *testing.T) {
		var missing int
		ids, err := e.pool.Query(ctx, `SELECT id FROM jobs WHERE status = 'done'`)
		if err != nil {
			t.Fatal(err)
		}
		defer ids.Close()
		for ids.Next() {
			var id int64
			if err := ids.Scan(&id); err != nil {
				t.Fatal(err)
			}
			if _, ok := executions.Load(id); !ok {
				missing++
			}
		}
		if missing != 0 {
			t.Fatalf("%d done jobs never reached a handler", missing)
		}
	})
	t.Run("chaos_happened", func(t *testing.T) {
		if ch.total() == 0 || lives.Load() <= int64(runners) || repeated == 0 {
			t.Fatalf("no worker was killed and restarted (kills %v, lives %d, repeated %d): the test proved nothing", ch.kills, lives.Load(), repeated)
		}
	})
}

// ---- 3. retries, backoff bounds and burial ----------------------------------------------------

// TestRunnerRetriesThenBuries checks attempt bounds against the real queue: once a failure is
// recorded (its retry due after the backoff by the database's clock, which is checked), the retry
// is moved to now, so each retry becomes claimable at once and every retry delay can be checked
// against its bounds.
func TestRunnerRetriesThenBuries(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	const base, maxDelay = time.Second, 8 * time.Second

	type failure struct {
		lastErr   string
		permanent bool
		delay     time.Duration
	}
	cases := []struct {
		name        string
		kind        string // the job's kind; "missing" has no handler
		maxAttempts int
		handlerErr  error
		wantRuns    int
		wantRetries int64
		wantErr     string // in last_error
		permanent   bool   // the failure is recorded as permanent
	}{
		{name: "fails_every_time_one_attempt", kind: "flaky", maxAttempts: 1, handlerErr: errors.New("boom"), wantRuns: 1, wantRetries: 0, wantErr: "boom"},
		{name: "fails_every_time_three_attempts", kind: "flaky", maxAttempts: 3, handlerErr: errors.New("boom"), wantRuns: 3, wantRetries: 2, wantErr: "boom"},
		{name: "fails_every_time_eight_attempts", kind: "flaky", maxAttempts: 8, handlerErr: errors.New("still broken"), wantRuns: 8, wantRetries: 7, wantErr: "still broken"},
		{name: "permanent_error_buries_at_once", kind: "flaky", maxAttempts: 5, handlerErr: fmt.Errorf("%w: bad payload", domain.ErrPermanent), wantRuns: 1, wantRetries: 0, wantErr: "bad payload", permanent: true},
		{name: "unknown_kind_buries_at_once", kind: "missing", maxAttempts: 5, wantRuns: 0, wantRetries: 0, wantErr: `no handler for kind "missing"`, permanent: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			queue := "retry-" + tc.name
			id := e.enqueue(t, jobOpts{Queue: queue, Kind: tc.kind, MaxAttempts: tc.maxAttempts})
			var runs atomic.Int32
			failures := make(chan failure, 16)
			store := &hookedStore{JobStore: e.queue, afterFail: func(id int64, lastErr string, permanent bool, retryAfter time.Duration, ok bool) {
				if !ok {
					t.Errorf("a failure of the only runner changed nothing")
				}
				failures <- failure{lastErr, permanent, retryAfter}
				e.retryDueNow(t, id, retryAfter) // the backoff passes before the next claim
			}}
			r := newRunner(t, store, runnerOpts{Queue: queue, BackoffBase: base, BackoffMax: maxDelay},
				map[string]job.JobHandler{"flaky": func(context.Context, domain.Job) error {
					runs.Add(1)
					return tc.handlerErr
				}})
			stop := runInBackground(t, r)

			wantFailures := max(tc.wantRuns, 1)
			for attempt := 1; attempt <= wantFailures; attempt++ {
				f := testenv.Recv(t, failures, fmt.Sprintf("failure %d", attempt))
				if f.permanent != tc.permanent {
					t.Fatalf("attempt %d recorded permanent=%v, want %v", attempt, f.permanent, tc.permanent)
				}
				if !strings.Contains(f.lastErr, tc.wantErr) {
					t.Fatalf("attempt %d recorded %q, want it to contain %q", attempt, f.lastErr, tc.wantErr)
				}
				d := min(base<<(attempt-1), maxDelay)
				if f.delay < d/2 || f.delay > d {
					t.Fatalf("retry delay after attempt %d = %v, want within [%v, %v]", attempt, f.delay, d/2, d)
				}
			}
			stop() // waits for the runner to finish recording its last outcome

			j := e.get(t, id)
			if j.Status != domain.JobDead {
				t.Fatalf("job is %s after its last failure, want dead", j.Status)
			}
			if j.Attempts != max(tc.wantRuns, 1) || !strings.Contains(j.LastError, tc.wantErr) || j.LeaseOwner != "" {
				t.Fatalf("dead job: attempts %d last_error %q owner %q; want attempts %d, last_error containing %q, no owner",
					j.Attempts, j.LastError, j.LeaseOwner, max(tc.wantRuns, 1), tc.wantErr)
			}
			if got := int(runs.Load()); got != tc.wantRuns {
				t.Fatalf("handler ran %d times, want %d", got, tc.wantRuns)
			}
			if got := r.Stats.Retried.Load(); got != tc.wantRetries {
				t.Fatalf("retried %d times, want %d", got, tc.wantRetries)
			}
			if r.Stats.Dead.Load() != 1 || r.Stats.Done.Load() != 0 || r.Stats.LostLeases.Load() != 0 {
				t.Fatalf("stats dead=%d done=%d lost=%d", r.Stats.Dead.Load(), r.Stats.Done.Load(), r.Stats.LostLeases.Load())
			}
			select {
			case f := <-failures:
				t.Fatalf("a failure after the job died: %+v", f)
			default:
			}
		})
	}

	t.Run("success_after_failures_is_done", func(t *testing.T) {
		t.Parallel()
		queue := "retry-then-succeed"
		id := e.enqueue(t, jobOpts{Queue: queue, MaxAttempts: 5})
		var runs atomic.Int32
		acked := make(chan bool, 1)
		store := &hookedStore{
			JobStore:  e.queue,
			afterFail: func(id int64, _ string, _ bool, retryAfter time.Duration, _ bool) { e.retryDueNow(t, id, retryAfter) },
			afterAck:  func(_ context.Context, _ int64, ok bool, _ error) { acked <- ok },
		}
		r := newRunner(t, store, runnerOpts{Queue: queue, BackoffBase: base, BackoffMax: maxDelay},
			map[string]job.JobHandler{"work": func(context.Context, domain.Job) error {
				if runs.Add(1) < 3 {
					return errors.New("not yet")
				}
				return nil
			}})
		stop := runInBackground(t, r)
		if !testenv.Recv(t, acked, "the ack") {
			t.Fatal("ack changed nothing")
		}
		stop() // the hook fires inside AckAndClaim; the runner counts the ack after it returns
		j := e.get(t, id)
		if j.Status != domain.JobDone || j.Attempts != 3 || j.LastError != "" {
			t.Fatalf("job %+v, want done after 3 attempts with no last error", j)
		}
		if r.Stats.Retried.Load() != 2 || r.Stats.Done.Load() != 1 {
			t.Fatalf("stats retried=%d done=%d", r.Stats.Retried.Load(), r.Stats.Done.Load())
		}
	})
}

// ---- 4. LISTEN/NOTIFY wakes an idle runner ----------------------------------------------------

func TestNotifyWakesIdleRunner(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	const queue = "wake"
	idle := make(chan struct{}, 1)
	store := &hookedStore{JobStore: e.queue, afterClaim: func(_ context.Context, jobs []domain.Job, err error) {
		if err == nil && len(jobs) == 0 {
			select {
			case idle <- struct{}{}:
			default:
			}
		}
	}}
	ran := make(chan int64, 1)
	r := newRunner(t, store, runnerOpts{Queue: queue, Poll: time.Hour}, map[string]job.JobHandler{
		"work": func(_ context.Context, j domain.Job) error { ran <- j.ID; return nil },
	})
	var wakes atomic.Int64
	listenCtx, stopListening := context.WithCancel(context.Background())
	listening := make(chan error, 1)
	go func() {
		listening <- e.queue.Listen(listenCtx, func(q string) {
			if q == queue {
				wakes.Add(1)
				r.Wake()
			}
		})
	}()
	t.Cleanup(func() {
		stopListening()
		if err := <-listening; err != nil {
			t.Errorf("listen: %v", err)
		}
	})
	testenv.WaitUntil(t, "the listener is LISTENing", func() bool {
		return e.count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN inkwell_jobs'`) == 1
	})
	runInBackground(t, r)
	testenv.Recv(t, idle, "the runner's first, empty claim")

	// The runner now waits out an hour's poll; only the notification can bring it back.
	id := e.enqueue(t, jobOpts{Queue: queue})
	if got := testenv.Recv(t, ran, "the job to run after the NOTIFY (poll is 1h)"); got != id {
		t.Fatalf("ran job %d, want %d", got, id)
	}
	if wakes.Load() < 1 {
		t.Fatal("the job ran without a wake-up")
	}
}

// A job that enqueues its successor without a NOTIFY (a webhook endpoint's next delivery,
// webhook_record_success) still has it run at once: the ack of the finished job claims too,
// though the runner's last claim found the queue empty and its poll is an hour away.
func TestAckClaimsTheSuccessorEnqueuedWithoutNotify(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	const queue = "successor"
	ran := make(chan string, 2)
	r := newRunner(t, e.queue, runnerOpts{Queue: queue, Concurrency: 4, Poll: time.Hour}, map[string]job.JobHandler{
		"first": func(ctx context.Context, _ domain.Job) error {
			_, err := e.pool.Exec(ctx, `INSERT INTO jobs (queue, kind, payload, max_attempts) VALUES ($1, 'second', '{}', 3)`, queue)
			ran <- "first"
			return err
		},
		"second": func(context.Context, domain.Job) error { ran <- "second"; return nil },
	})
	e.enqueue(t, jobOpts{Queue: queue, Kind: "first"})
	runInBackground(t, r)
	testenv.Recv(t, ran, "the first job")
	if got := testenv.Recv(t, ran, "the successor, claimed with the first's ack (no NOTIFY, poll 1h)"); got != "second" {
		t.Fatalf("ran %q, want the successor", got)
	}
}

// ---- 5. graceful shutdown ---------------------------------------------------------------------

func TestRunnerShutdown(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)

	t.Run("running_job_finishes_within_grace_and_is_acked", func(t *testing.T) {
		t.Parallel()
		const queue = "shutdown-grace"
		started, release := make(chan struct{}), make(chan struct{})
		handlerSaw := make(chan error, 1) // the handler's context error when it was let go
		var lateClaims atomic.Int64
		store := &hookedStore{JobStore: e.queue, afterClaim: func(ctx context.Context, jobs []domain.Job, _ error) {
			if ctx.Err() != nil && len(jobs) > 0 {
				lateClaims.Add(int64(len(jobs)))
			}
		}}
		r := newRunner(t, store, runnerOpts{Queue: queue, Concurrency: 2, Grace: time.Minute}, map[string]job.JobHandler{
			"work": func(ctx context.Context, _ domain.Job) error {
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
				}
				handlerSaw <- ctx.Err()
				return ctx.Err()
			},
		})
		first := e.enqueue(t, jobOpts{Queue: queue})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		var releaseOnce sync.Once
		letGo := func() { releaseOnce.Do(func() { close(release) }) }
		t.Cleanup(func() { cancel(); letGo() })
		testenv.Recv(t, started, "the handler to start")

		cancel()
		// Work arriving during shutdown is not claimed, even when the runner is woken for it.
		second := e.enqueue(t, jobOpts{Queue: queue, Kind: "later"})
		r.Wake()
		select {
		case err := <-handlerSaw:
			t.Fatalf("the handler's context ended (%v) at shutdown, before its grace ran out", err)
		case err := <-done:
			t.Fatalf("Run returned (%v) while its job was still running within grace", err)
		default:
		}
		letGo()
		if err := testenv.Recv(t, handlerSaw, "the handler to finish"); err != nil {
			t.Fatalf("the handler's context ended (%v) at shutdown, before its grace ran out", err)
		}
		if err := testenv.Recv(t, done, "Run to return"); err != nil {
			t.Fatal(err)
		}
		if j := e.get(t, first); j.Status != domain.JobDone {
			t.Fatalf("the job that finished within grace is %s, want done", j.Status)
		}
		if j := e.get(t, second); j.Status != domain.JobReady || j.Attempts != 0 {
			t.Fatalf("the job enqueued at shutdown is %s after %d attempts, want ready and never claimed", j.Status, j.Attempts)
		}
		if lateClaims.Load() != 0 || r.Stats.Claimed.Load() != 1 || r.Stats.Done.Load() != 1 {
			t.Fatalf("late claims %d, claimed %d, done %d", lateClaims.Load(), r.Stats.Claimed.Load(), r.Stats.Done.Load())
		}
	})

	// A handler that outlives Grace has its context cancelled; whatever it returns then, the job is
	// not acknowledged: it stays running under its lease, for the reaper to hand on.
	for _, tc := range []struct {
		name   string
		result func(ctx context.Context) error
	}{
		{name: "handler_returns_the_context_error", result: func(ctx context.Context) error { return ctx.Err() }},
		{name: "handler_ignores_cancellation_and_returns_nil", result: func(context.Context) error { return nil }},
		{name: "handler_returns_its_own_error", result: func(context.Context) error { return errors.New("interrupted") }},
	} {
		t.Run("outlives_grace/"+tc.name, func(t *testing.T) {
			t.Parallel()
			queue := "shutdown-" + tc.name
			started := make(chan struct{})
			cancelled := make(chan error, 1)
			r := newRunner(t, e.queue, runnerOpts{Queue: queue, Grace: 20 * time.Millisecond}, map[string]job.JobHandler{
				"work": func(ctx context.Context, _ domain.Job) error {
					close(started)
					<-ctx.Done() // never finishes on its own
					cancelled <- ctx.Err()
					return tc.result(ctx)
				},
			})
			id := e.enqueue(t, jobOpts{Queue: queue})
			stop := runInBackground(t, r)
			testenv.Recv(t, started, "the handler to start")
			claimed := e.get(t, id)
			stop() // returns once the handler has been cancelled and has returned
			if err := testenv.Recv(t, cancelled, "the handler's cancellation", time.Second); !errors.Is(err, context.Canceled) {
				t.Fatalf("handler context ended with %v, want context.Canceled", err)
			}
			j := e.get(t, id)
			if j.Status != domain.JobRunning || j.Generation != claimed.Generation || j.Attempts != 1 || j.LastError != "" {
				t.Fatalf("job after shutdown %+v, want still running under the claim's lease, not acked or failed", j)
			}
			if r.Stats.Done.Load() != 0 || r.Stats.Retried.Load() != 0 || r.Stats.Dead.Load() != 0 {
				t.Fatalf("stats done=%d retried=%d dead=%d", r.Stats.Done.Load(), r.Stats.Retried.Load(), r.Stats.Dead.Load())
			}
		})
	}
}

// ---- lease keep-alive -------------------------------------------------------------------------

// TestLeaseKeepAlive checks that a long handler keeps its lease by renewal, and that a handler
// whose lease is taken over loses its context at once and records nothing.
func TestLeaseKeepAlive(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)

	t.Run("renewed_while_running", func(t *testing.T) {
		t.Parallel()
		const queue = "keepalive"
		started, release := make(chan domain.Job, 1), make(chan struct{})
		r := newRunner(t, e.queue, runnerOpts{Queue: queue, Lease: 2 * time.Second}, map[string]job.JobHandler{
			"work": func(ctx context.Context, j domain.Job) error {
				started <- j
				select {
				case <-release:
					return ctx.Err()
				case <-ctx.Done():
					return ctx.Err()
				}
			},
		})
		id := e.enqueue(t, jobOpts{Queue: queue})
		runInBackground(t, r)
		claimed := testenv.Recv(t, started, "the handler to start")
		// Renewals (every third of the lease) carry it past its first expiry.
		testenv.WaitUntil(t, "the lease is renewed past its first expiry", func() bool {
			return e.get(t, id).LeaseUntil.After(claimed.LeaseUntil.Add(time.Second))
		})
		close(release)
		testenv.WaitUntil(t, "the job is done", func() bool { return e.get(t, id).Status == domain.JobDone })
		if r.Stats.LostLeases.Load() != 0 {
			t.Fatalf("lost %d leases", r.Stats.LostLeases.Load())
		}
	})

	t.Run("lost_lease_cancels_handler_and_records_nothing", func(t *testing.T) {
		t.Parallel()
		const queue = "stolen"
		started := make(chan domain.Job, 1)
		ended := make(chan error, 1)
		r := newRunner(t, e.queue, runnerOpts{Queue: queue, Lease: time.Second}, map[string]job.JobHandler{
			"work": func(ctx context.Context, j domain.Job) error {
				started <- j
				<-ctx.Done()
				ended <- ctx.Err()
				return nil // would ack if the runner let it
			},
		})
		id := e.enqueue(t, jobOpts{Queue: queue})
		runInBackground(t, r)
		claimed := testenv.Recv(t, started, "the handler to start")
		// Another worker takes the job over: the row moves to a new generation.
		if _, err := e.pool.Exec(context.Background(),
			`UPDATE jobs SET lease_owner = 'thief', lease_generation = lease_generation + 1, lease_until = now() + interval '1 hour' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		_ = testenv.Recv(t, ended, "the handler's context to end after a renewal found the lease gone") // ctx.Err(): never nil once Done
		testenv.WaitUntil(t, "the runner counts the lost lease", func() bool { return r.Stats.LostLeases.Load() == 1 })
		j := e.get(t, id)
		if j.Status != domain.JobRunning || j.LeaseOwner != "thief" || j.Generation != claimed.Generation+1 {
			t.Fatalf("job %+v: the stale holder changed it", j)
		}
		if r.Stats.Done.Load() != 0 {
			t.Fatal("the stale holder acked")
		}
	})
}

// failingRenewals is the real queue whose lease renewals all fail (the database is unreachable
// for them).
type failingRenewals struct{ job.JobStore }

func (failingRenewals) Renew(context.Context, int64, int64, time.Duration) (bool, error) {
	return false, errors.New("connection refused")
}

// TestLeaseDeadlineBeforeTheDatabaseExpiry: when no renewal gets through, the handler's context
// ends before the lease runs out by the database's clock (the one the reapers use): the runner
// counts the lease from before its claim with its own monotonic clock, never comparing clocks.
func TestLeaseDeadlineBeforeTheDatabaseExpiry(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	const queue = "lease-deadline"
	ended := make(chan bool, 1) // the lease was still live by the database's clock when ctx ended
	r := newRunner(t, failingRenewals{e.queue}, runnerOpts{Queue: queue, Lease: 600 * time.Millisecond}, map[string]job.JobHandler{
		"work": func(ctx context.Context, j domain.Job) error {
			<-ctx.Done()
			var live bool
			err := e.pool.QueryRow(context.Background(), `SELECT lease_until > clock_timestamp() FROM jobs WHERE id = $1`, j.ID).Scan(&live)
			if err != nil {
				t.Errorf("read the lease: %v", err)
			}
			ended <- live
			return ctx.Err()
		},
	})
	e.enqueue(t, jobOpts{Queue: queue})
	runInBackground(t, r)
	if !testenv.Recv(t, ended, "the handler's context to end with its lease") {
		t.Fatal("the handler still ran after its lease had run out by the database's clock")
	}
}

// observedRun is one run a JobObserver saw.
type observedRun struct{ queue, kind, outcome string }

type runObserver chan observedRun

func (o runObserver) ObserveJob(queue, kind, outcome string, d time.Duration) {
	if d < 0 {
		panic("negative job duration")
	}
	o <- observedRun{queue, kind, outcome}
}

// TestRunnerObservesEachRunByKindAndOutcome: every run is reported once with its kind (a handled
// one, else "unknown") and outcome, for job durations by kind and outcome in the metrics.
func TestRunnerObservesEachRunByKindAndOutcome(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 4)
	const queue = "observed"
	runs := make(runObserver, 16)
	store := &hookedStore{JobStore: e.queue, afterFail: func(id int64, _ string, _ bool, retryAfter time.Duration, _ bool) {
		e.retryDueNow(t, id, retryAfter)
	}}
	r := newRunner(t, store, runnerOpts{Queue: queue, Observer: runs}, map[string]job.JobHandler{
		"ok":    func(context.Context, domain.Job) error { return nil },
		"flaky": func(context.Context, domain.Job) error { return errors.New("boom") },
	})
	e.enqueue(t, jobOpts{Queue: queue, Kind: "ok"})
	e.enqueue(t, jobOpts{Queue: queue, Kind: "flaky", MaxAttempts: 2})
	e.enqueue(t, jobOpts{Queue: queue, Kind: "made-up-kind"})
	stop := runInBackground(t, r)
	got := map[observedRun]int{}
	for i := range 4 {
		got[testenv.Recv(t, runs, fmt.Sprintf("run %d", i+1))]++
	}
	stop()
	want := map[observedRun]int{
		{queue, "ok", job.JobOutcomeDone}:      1,
		{queue, "flaky", job.JobOutcomeRetry}:  1,
		{queue, "flaky", job.JobOutcomeDead}:   1,
		{queue, "unknown", job.JobOutcomeDead}: 1,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
	select {
	case extra := <-runs:
		t.Fatalf("an extra observation: %+v", extra)
	default:
	}
}
