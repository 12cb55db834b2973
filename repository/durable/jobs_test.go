package durable_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/durable"
)

// The job queue's tests run on databases of their own. A reap is not scoped to a queue, so a test
// that reaps owns its database; the others share one and keep to queues of their own.

type jobsEnv struct {
	pool  *pgxpool.Pool
	queue *durable.JobQueue
}

func newJobsEnv(t *testing.T) *jobsEnv {
	t.Helper()
	db := testenv.NewDB(t)
	return &jobsEnv{pool: db.Pool, queue: durable.NewJobQueue(durable.QueuePool{Pool: db.Pool}, dao.New())}
}

// newJob is a job to enqueue; empty fields get defaults.
type newJobOpts struct {
	Queue       string // required
	Kind        string // empty: "work"
	MaxAttempts int
	UniqueKey   string
	Priority    int
	RunAt       time.Time
}

func (o newJobOpts) job() domain.NewJob {
	if o.Kind == "" {
		o.Kind = "work"
	}
	return domain.NewJob{Queue: o.Queue, Kind: o.Kind, MaxAttempts: o.MaxAttempts, UniqueKey: o.UniqueKey, Priority: o.Priority, RunAt: o.RunAt}
}

func (e *jobsEnv) enqueue(t *testing.T, o newJobOpts) {
	t.Helper()
	added, err := e.queue.Enqueue(context.Background(), o.job())
	if err != nil || !added {
		t.Fatalf("enqueue %+v: added=%v err=%v", o, added, err)
	}
}

func (e *jobsEnv) jobCount(t *testing.T, queue string) int64 {
	t.Helper()
	var n int64
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE queue = $1`, queue).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// claimOne claims one job for lease; a negative lease has run out by the database's clock as soon
// as the claim commits (the queue takes instants from nobody but the database).
func (e *jobsEnv) claimOne(t *testing.T, queue, owner string, lease time.Duration) domain.Job {
	t.Helper()
	jobs, err := e.queue.Claim(context.Background(), queue, owner, 1, lease)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim from %s by %s: %d jobs, err %v", queue, owner, len(jobs), err)
	}
	return jobs[0]
}

func (e *jobsEnv) get(t *testing.T, id int64) domain.Job {
	t.Helper()
	j, err := e.queue.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get job %d: %v", id, err)
	}
	return j
}

// sameRow compares two reads of a job row, timestamps by instant.
func sameRow(a, b domain.Job) bool {
	ts := func(x, y time.Time) bool { return x.Equal(y) }
	return a.ID == b.ID && a.Queue == b.Queue && a.Kind == b.Kind && reflect.DeepEqual(a.Payload, b.Payload) &&
		a.Status == b.Status && a.Priority == b.Priority && ts(a.AvailableAt, b.AvailableAt) && a.LeaseOwner == b.LeaseOwner &&
		ts(a.LeaseUntil, b.LeaseUntil) && a.Generation == b.Generation && a.Attempts == b.Attempts &&
		a.MaxAttempts == b.MaxAttempts && a.LastError == b.LastError && a.UniqueKey == b.UniqueKey &&
		ts(a.CreatedAt, b.CreatedAt) && ts(a.UpdatedAt, b.UpdatedAt)
}

// TestJobQueue_StaleHolderChangesNothing: a worker whose lease expired, was reaped and claimed by
// another owner still holds the old generation; its ack, failure (plain or permanent) and renewal
// must all change 0 rows — while the new holder runs the job, after it acked, and after it failed
// the job back to ready. 1,000 rounds, with the stale calls in random order.
func TestJobQueue_StaleHolderChangesNothing(t *testing.T) {
	t.Parallel()
	const rounds = 1000
	e := newJobsEnv(t)
	ctx := context.Background()
	// One queue per round, so each round's claims find exactly its own job.
	if _, err := e.pool.Exec(ctx, `INSERT INTO jobs (queue, kind) SELECT 'stale-' || g, 'work' FROM generate_series(1, $1::int) g`, rounds); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 1))
	// The stale worker's lease has run out when its claim commits; the new holder's outlasts the test.
	const expired, lease = -time.Second, time.Hour

	type staleCall struct {
		name string
		call func(j domain.Job) (bool, error)
	}
	calls := []staleCall{
		{"ack", func(j domain.Job) (bool, error) { return e.queue.Ack(ctx, j.ID, j.Generation) }},
		{"fail", func(j domain.Job) (bool, error) {
			return e.queue.Fail(ctx, j.ID, j.Generation, "stale failure", false, 0)
		}},
		{"fail_permanent", func(j domain.Job) (bool, error) {
			return e.queue.Fail(ctx, j.ID, j.Generation, "stale burial", true, 0)
		}},
		{"renew", func(j domain.Job) (bool, error) {
			return e.queue.Renew(ctx, j.ID, j.Generation, time.Hour)
		}},
	}
	// What the new holder has done by the time the stale worker wakes up.
	phases := []string{"new holder running", "new holder acked", "new holder failed it"}
	changed := map[string]int{}
	for i := range rounds {
		queue := fmt.Sprintf("stale-%d", i+1)
		stale := e.claimOne(t, queue, "worker-a", expired)
		if n, err := e.queue.Reap(ctx); err != nil || n != 1 {
			t.Fatalf("round %d: reap returned %d jobs, err %v; want exactly the stale job", i, n, err)
		}
		holder := e.claimOne(t, queue, "worker-b", lease)
		if holder.ID != stale.ID || holder.Generation != stale.Generation+1 || holder.Attempts != 2 {
			t.Fatalf("round %d: re-claim %+v after stale %+v", i, holder, stale)
		}
		phase := phases[rnd.IntN(len(phases))]
		switch phase {
		case "new holder acked":
			if ok, err := e.queue.Ack(ctx, holder.ID, holder.Generation); !ok || err != nil {
				t.Fatalf("round %d: the holder's ack: %v %v", i, ok, err)
			}
		case "new holder failed it":
			if ok, err := e.queue.Fail(ctx, holder.ID, holder.Generation, "holder failed", false, time.Hour); !ok || err != nil {
				t.Fatalf("round %d: the holder's failure: %v %v", i, ok, err)
			}
		}
		before := e.get(t, holder.ID)
		for _, k := range rnd.Perm(len(calls)) {
			c := calls[k]
			ok, err := c.call(stale)
			if err != nil {
				t.Fatalf("round %d: stale %s: %v", i, c.name, err)
			}
			if ok {
				changed[c.name+" while "+phase]++
			}
		}
		if after := e.get(t, holder.ID); !sameRow(before, after) {
			t.Fatalf("round %d (%s): stale calls changed the row\nbefore %+v\nafter  %+v", i, phase, before, after)
		}
		if phase == "new holder running" { // and the rightful holder still can finish it
			if ok, err := e.queue.Ack(ctx, holder.ID, holder.Generation); !ok || err != nil {
				t.Fatalf("round %d: the holder's ack after the stale calls: %v %v", i, ok, err)
			}
		}
	}
	if len(changed) != 0 {
		t.Fatalf("stale calls that reported a change: %v", changed)
	}
	var running int64
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE status = 'running'`).Scan(&running); err != nil || running != 0 {
		t.Fatalf("%d jobs left running (err %v)", running, err)
	}
}

// TestJobQueue_FailAndReap checks how failures and expired leases move a job.
func TestJobQueue_FailAndReap(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t) // reaps: a database of its own, and the subtests run in order
	ctx := context.Background()

	t.Run("failure_with_attempts_left_is_ready_at_retry_time", func(t *testing.T) {
		e.enqueue(t, newJobOpts{Queue: "fail-retry", MaxAttempts: 2})
		j := e.claimOne(t, "fail-retry", "w", time.Minute)
		const retryAfter = 90 * time.Second
		if ok, err := e.queue.Fail(ctx, j.ID, j.Generation, "try again", false, retryAfter); !ok || err != nil {
			t.Fatalf("fail: %v %v", ok, err)
		}
		got := e.get(t, j.ID)
		// Both stamped by the database's clock in the failure's statement.
		if got.Status != domain.JobReady || !got.AvailableAt.Equal(got.UpdatedAt.Add(retryAfter)) || got.LastError != "try again" || got.LeaseOwner != "" {
			t.Fatalf("after a failure with attempts left: %+v, want available %v after the failure", got, retryAfter)
		}
		if jobs, _ := e.queue.Claim(ctx, "fail-retry", "w", 1, time.Minute); len(jobs) != 0 {
			t.Fatal("claimed before its retry time")
		}
		// The retry time passes (by the database's clock, which the test cannot move).
		if _, err := e.pool.Exec(ctx, `UPDATE jobs SET available_at = now() - interval '1 second' WHERE id = $1`, j.ID); err != nil {
			t.Fatal(err)
		}
		j = e.claimOne(t, "fail-retry", "w", time.Minute)
		if ok, err := e.queue.Fail(ctx, j.ID, j.Generation, "last words", false, time.Hour); !ok || err != nil {
			t.Fatalf("fail: %v %v", ok, err)
		}
		if got := e.get(t, j.ID); got.Status != domain.JobDead || got.Attempts != 2 || got.LastError != "last words" {
			t.Fatalf("after the last attempt failed: %+v", got)
		}
	})
	t.Run("permanent_failure_is_dead_with_attempts_left", func(t *testing.T) {
		e.enqueue(t, newJobOpts{Queue: "fail-permanent", MaxAttempts: 5})
		j := e.claimOne(t, "fail-permanent", "w", time.Minute)
		if ok, err := e.queue.Fail(ctx, j.ID, j.Generation, "bad payload", true, time.Hour); !ok || err != nil {
			t.Fatalf("fail: %v %v", ok, err)
		}
		if got := e.get(t, j.ID); got.Status != domain.JobDead || got.Attempts != 1 || got.LastError != "bad payload" {
			t.Fatalf("after a permanent failure: %+v", got)
		}
	})
	t.Run("reap_returns_expired_leases_and_buries_last_attempts", func(t *testing.T) {
		e.enqueue(t, newJobOpts{Queue: "reap", Kind: "again", MaxAttempts: 3})
		e.enqueue(t, newJobOpts{Queue: "reap", Kind: "last", MaxAttempts: 1})
		e.enqueue(t, newJobOpts{Queue: "reap", Kind: "alive", MaxAttempts: 3})
		byKind := map[string]domain.Job{}
		for _, lease := range []time.Duration{-time.Second, -time.Second, time.Hour} { // two run out at once
			j := e.claimOne(t, "reap", "w", lease)
			byKind[j.Kind] = j
		}
		n, err := e.queue.Reap(ctx)
		if err != nil || n != 2 {
			t.Fatalf("reap: %d jobs, err %v; want the two expired ones", n, err)
		}
		if got := e.get(t, byKind["again"].ID); got.Status != domain.JobReady || got.LeaseOwner != "" || got.LastError == "" {
			t.Fatalf("expired job with attempts left: %+v", got)
		}
		if got := e.get(t, byKind["last"].ID); got.Status != domain.JobDead || got.LastError == "" {
			t.Fatalf("expired job on its last attempt: %+v", got)
		}
		if got := e.get(t, byKind["alive"].ID); got.Status != domain.JobRunning || got.Generation != byKind["alive"].Generation {
			t.Fatalf("job with a live lease: %+v", got)
		}
		if n, err := e.queue.Reap(ctx); err != nil || n != 0 {
			t.Fatalf("second reap: %d, %v", n, err)
		}
	})
}

// The reaper works in batches: each statement returns at most a batch, and Reap goes on until a
// batch comes back short, so every expired lease is reaped in one call.
func TestJobQueue_ReapInBatches(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t) // reaps: a database of its own
	ctx := context.Background()
	const expired, batch = 7, 3
	for range expired + 1 {
		e.enqueue(t, newJobOpts{Queue: "reap-batches", MaxAttempts: 3})
	}
	var ids []int64
	for range expired {
		ids = append(ids, e.claimOne(t, "reap-batches", "w", -time.Second).ID)
	}
	alive := e.claimOne(t, "reap-batches", "w", time.Hour)
	n, err := e.queue.ReapInBatches(ctx, batch)
	if err != nil || n != expired {
		t.Fatalf("reap: %d jobs, err %v; want all %d expired ones across batches of %d", n, err, expired, batch)
	}
	for _, id := range ids {
		if got := e.get(t, id); got.Status != domain.JobReady {
			t.Fatalf("expired job %d after the reap: %+v", id, got)
		}
	}
	if got := e.get(t, alive.ID); got.Status != domain.JobRunning {
		t.Fatalf("job with a live lease: %+v", got)
	}
}

// Reapers on several instances reap at once: each expired lease is returned exactly once.
func TestJobQueue_ConcurrentReapers(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t) // reaps: a database of its own
	ctx := context.Background()
	const expired, reapers, batch = 40, 4, 5
	for range expired {
		e.enqueue(t, newJobOpts{Queue: "reap-concurrent", MaxAttempts: 3})
	}
	for range expired {
		e.claimOne(t, "reap-concurrent", "w", -time.Second)
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range reapers {
		wg.Go(func() {
			<-start
			n, err := e.queue.ReapInBatches(ctx, batch)
			if err != nil {
				t.Errorf("reap: %v", err)
			}
			total.Add(int64(n))
		})
	}
	close(start)
	wg.Wait()
	if got := total.Load(); got != expired {
		t.Fatalf("the reapers returned %d leases together, want each of the %d exactly once", got, expired)
	}
	var ready int
	if err := e.pool.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE queue = 'reap-concurrent' AND status = 'ready' AND attempts = 1").Scan(&ready); err != nil || ready != expired {
		t.Fatalf("%d ready jobs (err %v), want %d", ready, err, expired)
	}
}

func TestJobQueue_Enqueue(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t)
	ctx := context.Background()

	t.Run("in_a_transaction_that_rolls_back_leaves_no_job", func(t *testing.T) {
		t.Parallel()
		tx, err := e.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		added, err := durable.EnqueueTx(ctx, dao.New(), tx, newJobOpts{Queue: "tx-rollback"}.job())
		if err != nil || !added {
			t.Fatalf("enqueue in tx: %v %v", added, err)
		}
		var inside int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE queue = 'tx-rollback'`).Scan(&inside); err != nil || inside != 1 {
			t.Fatalf("inside the transaction: %d jobs (err %v)", inside, err)
		}
		if n := e.jobCount(t, "tx-rollback"); n != 0 {
			t.Fatalf("the uncommitted job is visible outside its transaction (%d)", n)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if n := e.jobCount(t, "tx-rollback"); n != 0 {
			t.Fatalf("%d jobs after rollback, want 0", n)
		}
	})
	t.Run("in_a_transaction_that_commits_exists_after_commit", func(t *testing.T) {
		t.Parallel()
		err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			_, err := durable.EnqueueTx(ctx, dao.New(), tx, newJobOpts{Queue: "tx-commit"}.job())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := e.jobCount(t, "tx-commit"); n != 1 {
			t.Fatalf("%d jobs after commit, want 1", n)
		}
	})
	t.Run("same_unique_key_twice_is_one_job", func(t *testing.T) {
		t.Parallel()
		o := newJobOpts{Queue: "unique", UniqueKey: "welcome-mail-42"}
		for i, want := range []bool{true, false, false} {
			added, err := e.queue.Enqueue(ctx, o.job())
			if err != nil || added != want {
				t.Fatalf("enqueue #%d: added=%v err=%v, want added=%v", i+1, added, err, want)
			}
		}
		if n := e.jobCount(t, "unique"); n != 1 {
			t.Fatalf("%d jobs, want 1", n)
		}
		// The key is per queue, and jobs without a key never collide.
		e.enqueue(t, newJobOpts{Queue: "unique-elsewhere", UniqueKey: "welcome-mail-42"})
		e.enqueue(t, newJobOpts{Queue: "unique"})
		e.enqueue(t, newJobOpts{Queue: "unique"})
		if n := e.jobCount(t, "unique"); n != 3 {
			t.Fatalf("%d jobs, want 3", n)
		}
	})
	t.Run("same_unique_key_twice_in_one_transaction_is_one_job", func(t *testing.T) {
		t.Parallel()
		var results []bool
		err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			for range 2 {
				added, err := durable.EnqueueTx(ctx, dao.New(), tx, newJobOpts{Queue: "unique-tx", UniqueKey: "k"}.job())
				if err != nil {
					return err
				}
				results = append(results, added)
			}
			return nil
		})
		if err != nil || !reflect.DeepEqual(results, []bool{true, false}) {
			t.Fatalf("added %v (err %v), want [true false]", results, err)
		}
		if n := e.jobCount(t, "unique-tx"); n != 1 {
			t.Fatalf("%d jobs, want 1", n)
		}
	})
	t.Run("same_unique_key_concurrently_is_one_job", func(t *testing.T) {
		t.Parallel()
		var added, failed atomic.Int64
		testenv.Together(10, func(int) {
			ok, err := e.queue.Enqueue(ctx, newJobOpts{Queue: "unique-race", UniqueKey: "once"}.job())
			switch {
			case err != nil:
				failed.Add(1)
			case ok:
				added.Add(1)
			}
		})
		if added.Load() != 1 || failed.Load() != 0 || e.jobCount(t, "unique-race") != 1 {
			t.Fatalf("added %d, failed %d, jobs %d; want 1, 0, 1", added.Load(), failed.Load(), e.jobCount(t, "unique-race"))
		}
	})
	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		before := time.Now().Add(-time.Second)
		e.enqueue(t, newJobOpts{Queue: "defaults"})
		j := e.claimOne(t, "defaults", "w", time.Minute)
		if j.MaxAttempts != domain.DefaultMaxAttempts || string(j.Payload) != "{}" || j.AvailableAt.Before(before) || j.Attempts != 1 || j.Generation != 1 {
			t.Fatalf("defaults: %+v", j)
		}
	})
}

// TestJobQueue_NotifyOnlyOnCommit: the wake-up NOTIFY is transactional too — a rolled-back
// enqueue wakes nobody, a committed one wakes listeners with the queue's name.
func TestJobQueue_NotifyOnlyOnCommit(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t)
	ctx, stop := context.WithCancel(context.Background())
	woken := make(chan string, 16)
	listening := make(chan error, 1)
	go func() { listening <- e.queue.Listen(ctx, func(q string) { woken <- q }) }()
	t.Cleanup(func() {
		stop()
		if err := <-listening; err != nil {
			t.Errorf("listen: %v", err)
		}
	})
	testenv.WaitUntil(t, "the listener is LISTENing", func() bool {
		var n int64
		err := e.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN inkwell_jobs'`).Scan(&n)
		return err == nil && n == 1
	})

	tx, err := e.pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := durable.EnqueueTx(context.Background(), dao.New(), tx, newJobOpts{Queue: "rolled-back"}.job()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.enqueue(t, newJobOpts{Queue: "committed"})
	// Notifications arrive in commit order; the rolled-back one would have come first.
	if q := testenv.Recv(t, woken, "the committed enqueue's notification"); q != "committed" {
		t.Fatalf("first wake-up for queue %q, want %q", q, "committed")
	}
}

func TestJobQueue_Claim(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t)
	ctx := context.Background()

	t.Run("concurrent_claims_are_disjoint", func(t *testing.T) {
		t.Parallel()
		const jobs, claimers, batch = 400, 8, 7
		if _, err := e.pool.Exec(ctx, `INSERT INTO jobs (queue, kind) SELECT 'disjoint', 'work' FROM generate_series(1, $1::int)`, jobs); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		seen := map[int64]string{}
		var dup []int64
		testenv.Together(claimers, func(i int) {
			owner := fmt.Sprintf("claimer-%d", i)
			for {
				got, err := e.queue.Claim(ctx, "disjoint", owner, batch, time.Minute)
				if err != nil {
					t.Errorf("%s: %v", owner, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					if _, ok := seen[j.ID]; ok {
						dup = append(dup, j.ID)
					}
					seen[j.ID] = owner
					if j.LeaseOwner != owner || j.Status != domain.JobRunning || j.Generation != 1 {
						t.Errorf("claimed %+v as %s", j, owner)
					}
				}
				mu.Unlock()
			}
		})
		if len(dup) != 0 || len(seen) != jobs {
			t.Fatalf("%d distinct jobs claimed of %d, claimed twice: %v", len(seen), jobs, dup)
		}
	})
	t.Run("best_priority_then_oldest_and_only_when_due", func(t *testing.T) {
		t.Parallel()
		now := time.Now().Truncate(time.Millisecond)
		e.enqueue(t, newJobOpts{Queue: "order", Kind: "low-old", RunAt: now.Add(-time.Hour)})
		e.enqueue(t, newJobOpts{Queue: "order", Kind: "high-new", Priority: 5, RunAt: now.Add(-time.Minute)})
		e.enqueue(t, newJobOpts{Queue: "order", Kind: "high-old", Priority: 5, RunAt: now.Add(-2 * time.Minute)})
		e.enqueue(t, newJobOpts{Queue: "order", Kind: "future", Priority: 9, RunAt: now.Add(time.Hour)})
		var kinds []string
		for {
			got, err := e.queue.Claim(ctx, "order", "w", 1, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
			kinds = append(kinds, got[0].Kind)
		}
		if want := []string{"high-old", "high-new", "low-old"}; !reflect.DeepEqual(kinds, want) {
			t.Fatalf("claim order %v, want %v (and the future job not at all)", kinds, want)
		}
	})
}

func TestJobQueue_OperatorActions(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t)
	ctx := context.Background()
	e.enqueue(t, newJobOpts{Queue: "ops", Kind: "dies", MaxAttempts: 1})
	e.enqueue(t, newJobOpts{Queue: "ops", Kind: "succeeds"})
	e.enqueue(t, newJobOpts{Queue: "ops", Kind: "waits"})
	ids := map[string]int64{}
	for range 2 {
		j := e.claimOne(t, "ops", "w", time.Minute)
		ids[j.Kind] = j.ID
		if j.Kind == "dies" {
			if ok, err := e.queue.Fail(ctx, j.ID, j.Generation, "broken", false, 0); !ok || err != nil {
				t.Fatalf("fail: %v %v", ok, err)
			}
		} else if ok, err := e.queue.Ack(ctx, j.ID, j.Generation); !ok || err != nil {
			t.Fatalf("ack: %v %v", ok, err)
		}
	}
	list, err := e.queue.List(ctx, "ops", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Status != domain.JobDead || list[0].Kind != "dies" {
		t.Fatalf("list does not put the dead job first: %+v", list)
	}
	dead, err := e.queue.List(ctx, "ops", domain.JobDead, 10)
	if err != nil || len(dead) != 1 || dead[0].ID != ids["dies"] {
		t.Fatalf("dead jobs: %+v, %v", dead, err)
	}

	for _, tc := range []struct {
		name string
		run  func() error
		want error
	}{
		{"retry_a_done_job_is_not_found", func() error { return e.queue.Retry(ctx, ids["succeeds"]) }, domain.ErrNotFound},
		{"discard_a_ready_job_is_not_found", func() error {
			waiting, _ := e.queue.List(ctx, "ops", domain.JobReady, 10)
			if len(waiting) != 1 {
				return fmt.Errorf("ready jobs %+v", waiting)
			}
			return e.queue.Discard(ctx, waiting[0].ID)
		}, domain.ErrNotFound},
		{"retry_a_missing_job_is_not_found", func() error { return e.queue.Retry(ctx, 1<<50) }, domain.ErrNotFound},
	} {
		if err := tc.run(); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}

	if err := e.queue.Retry(ctx, ids["dies"]); err != nil {
		t.Fatal(err)
	}
	if j := e.get(t, ids["dies"]); j.Status != domain.JobReady || j.Attempts != 0 || j.LastError != "" {
		t.Fatalf("retried job %+v, want ready with fresh attempts", j)
	}
	if err := e.queue.Discard(ctx, ids["succeeds"]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.queue.Get(ctx, ids["succeeds"]); err == nil {
		t.Fatal("discarded job still there")
	}
	remaining, _ := e.queue.List(ctx, "ops", "", 10)
	kinds := make([]string, len(remaining))
	for i, j := range remaining {
		kinds[i] = j.Kind
	}
	sort.Strings(kinds)
	if !reflect.DeepEqual(kinds, []string{"dies", "waits"}) {
		t.Fatalf("remaining jobs %v", kinds)
	}
}
