package durable_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// TestJobQueue_AckAndClaim: one call acknowledges a batch — reporting, per job, whether its lease
// was still held — and claims the next batch, which never includes the jobs just acknowledged.
func TestJobQueue_AckAndClaim(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t)
	ctx := context.Background()
	const queue, lease = "cycle", time.Minute
	for range 6 {
		e.enqueue(t, newJobOpts{Queue: queue})
	}
	held, err := e.queue.Claim(ctx, queue, "w1", 3, lease)
	if err != nil || len(held) != 3 {
		t.Fatalf("claim 3: %d jobs, err %v", len(held), err)
	}
	// The second job's lease runs out; it is reaped and claimed by another worker, so w1's ack of
	// it must not take.
	if _, err := e.pool.Exec(ctx, `UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, held[1].ID); err != nil {
		t.Fatal(err)
	}
	if n, err := e.queue.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("reap: %d, %v", n, err)
	}
	// Claims take the oldest first, so the reaped job (the second-oldest ready one) comes back.
	var taken domain.Job
	for _, j := range mustClaim(t, e, queue, "w2", 2, lease) {
		if j.ID == held[1].ID {
			taken = j
		}
	}
	if taken.ID == 0 {
		t.Fatalf("the reaped job %d was not claimed again", held[1].ID)
	}

	acked, next, err := e.queue.AckAndClaim(ctx, held, domain.JobClaim{Queue: queue, Owner: "w1", Limit: 5, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, true}; !slices.Equal(acked, want) {
		t.Fatalf("acked %v, want %v", acked, want)
	}
	// Of six jobs, w1 claimed three and w2 two, one of them w1's reaped one: two are left.
	if len(next) != 2 {
		t.Fatalf("claimed %d jobs, want the 2 left", len(next))
	}
	for _, j := range next {
		if j.LeaseOwner != "w1" || j.Status != domain.JobRunning || j.Generation != 1 || slices.ContainsFunc(held, func(h domain.Job) bool { return h.ID == j.ID }) {
			t.Fatalf("claimed %+v, want a job never claimed before, running under w1 at generation 1", j)
		}
	}
	for i, want := range []domain.JobStatus{domain.JobDone, domain.JobRunning, domain.JobDone} {
		if got := e.get(t, held[i].ID); got.Status != want {
			t.Fatalf("job %d is %s, want %s", held[i].ID, got.Status, want)
		}
	}
	if got := e.get(t, taken.ID); got.LeaseOwner != "w2" || got.Generation != taken.Generation {
		t.Fatalf("the job w2 holds is %+v: w1's stale ack touched it", got)
	}

	t.Run("nothing_to_do", func(t *testing.T) {
		acked, claimed, err := e.queue.AckAndClaim(ctx, nil, domain.JobClaim{Queue: queue, Owner: "w1"})
		if err != nil || len(acked) != 0 || len(claimed) != 0 {
			t.Fatalf("acked %v claimed %v err %v", acked, claimed, err)
		}
	})
	t.Run("acks_only", func(t *testing.T) {
		acked, claimed, err := e.queue.AckAndClaim(ctx, next, domain.JobClaim{Queue: queue, Owner: "w1"})
		if err != nil || !slices.Equal(acked, []bool{true, true}) || len(claimed) != 0 {
			t.Fatalf("acked %v claimed %v err %v", acked, claimed, err)
		}
	})
}

func mustClaim(t *testing.T, e *jobsEnv, queue, owner string, n int, lease time.Duration) []domain.Job {
	t.Helper()
	jobs, err := e.queue.Claim(context.Background(), queue, owner, n, lease)
	if err != nil || len(jobs) != n {
		t.Fatalf("claim %d from %s by %s: %d jobs, err %v", n, queue, owner, len(jobs), err)
	}
	return jobs
}

// TestJobQueueGenericPlans: the queue's pool plans each statement once (PlanStatementsOnce), so
// every statement must have a plan that is good whatever its parameters: index scans only, on a
// table big enough that a bad estimate would pick a sequential scan or a hash join over all of
// it. PostgreSQL's auto_explain, loaded into the test's session, sends each executed statement's
// plan back as a notice.
func TestJobQueueGenericPlans(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO jobs (queue, kind, status, finished_at)
		SELECT 'plans', 'work', CASE WHEN g % 10 = 0 THEN 'done' ELSE 'ready' END, CASE WHEN g % 10 = 0 THEN now() END FROM generate_series(1, 50000) g;
		ANALYZE jobs`); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var plans []string
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pg.PlanStatementsOnce(cfg)
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		plans = append(plans, n.Message)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, `LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_level = notice`)
		return err
	}
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	q := durable.NewJobQueue(durable.QueuePool{Pool: pool}, dao.New())

	planOf := func(name string, run func() error) string {
		t.Helper()
		mu.Lock()
		plans = nil
		mu.Unlock()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(plans) == 0 {
			t.Fatalf("%s: no plan came back (is auto_explain installed?)", name)
		}
		return strings.Join(plans, "\n")
	}
	check := func(name, plan string, mustUse ...string) {
		t.Helper()
		if strings.Contains(plan, "Seq Scan on jobs") || strings.Contains(plan, "Hash Join") {
			t.Errorf("%s reads the whole jobs table under its generic plan:\n%s", name, plan)
		}
		for _, idx := range mustUse {
			if !strings.Contains(plan, idx) {
				t.Errorf("%s does not use %s:\n%s", name, idx, plan)
			}
		}
	}

	var held []domain.Job
	// The first run of a statement may still be planned for its parameters; the second is the
	// generic plan the pool keeps.
	for range 2 {
		plan := planOf("ack and claim", func() error {
			var err error
			_, held, err = q.AckAndClaim(ctx, held, domain.JobClaim{Queue: "plans", Owner: "w", Limit: 8, Lease: time.Minute})
			return err
		})
		check("ack and claim", plan, "jobs_ready_idx", "jobs_pkey")
	}
	check("renew", planOf("renew", func() error {
		_, err := q.Renew(ctx, held[0].ID, held[0].Generation, time.Minute)
		return err
	}), "jobs_pkey")
	check("fail", planOf("fail", func() error {
		_, err := q.Fail(ctx, held[1].ID, held[1].Generation, "boom", false, 0)
		return err
	}), "jobs_pkey")
	check("reap", planOf("reap", func() error {
		_, err := q.Reap(ctx)
		return err
	}), "jobs_running_lease_idx")
}

// TestJobQueue_LeasesUseTheDatabaseClock: a claim and a renewal stamp the lease from the
// database's clock (lease_until is the statement's now() plus the lease), never from an instant
// the caller passes, so instances whose clocks differ agree on when a lease runs out.
func TestJobQueue_LeasesUseTheDatabaseClock(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t)
	ctx := context.Background()
	dbNow := func() time.Time {
		var now time.Time
		if err := e.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
			t.Fatal(err)
		}
		return now
	}
	e.enqueue(t, newJobOpts{Queue: "db-clock"})
	const lease = 42 * time.Second
	before := dbNow()
	j := e.claimOne(t, "db-clock", "w", lease)
	after := dbNow()
	if !j.LeaseUntil.Equal(j.UpdatedAt.Add(lease)) || j.UpdatedAt.Before(before) || j.UpdatedAt.After(after) {
		t.Fatalf("claim: lease until %v, stamped %v; want the database's time of the claim (within [%v, %v]) plus %v",
			j.LeaseUntil, j.UpdatedAt, before, after, lease)
	}
	if ok, err := e.queue.Renew(ctx, j.ID, j.Generation, 2*lease); !ok || err != nil {
		t.Fatalf("renew: %v %v", ok, err)
	}
	if got := e.get(t, j.ID); !got.LeaseUntil.Equal(got.UpdatedAt.Add(2*lease)) || got.UpdatedAt.Before(after) {
		t.Fatalf("renewal: lease until %v, stamped %v; want the renewal's database time plus %v", got.LeaseUntil, got.UpdatedAt, 2*lease)
	}
	// A lease counted from the database's clock has not run out, whatever this process's clock says.
	if n, err := e.queue.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("reap: %d, %v; want the live lease kept", n, err)
	}
}
