package job_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/job"
)

// BenchmarkQueueThroughput measures jobs claimed and acknowledged per second by eight worker slots
// with no-op handlers, against the real PostgreSQL queue. b.N jobs are enqueued before the timer
// starts (one INSERT … SELECT generate_series); the timer stops when the b.N-th ack lands.
//
//	go test -run '^$' -bench BenchmarkQueueThroughput -benchtime 20000x ./job/
//
// The sub-benchmarks split the eight slots differently: eight single-slot runners (eight
// processes), or fewer runners with more concurrency each (claims are then batched).
func BenchmarkQueueThroughput(b *testing.B) {
	for _, shape := range []struct{ runners, concurrency int }{{8, 1}, {4, 2}, {2, 4}, {1, 8}} {
		b.Run(fmt.Sprintf("runners=%d/concurrency=%d", shape.runners, shape.concurrency), func(b *testing.B) {
			benchQueue(b, shape.runners, shape.concurrency)
		})
	}
}

// benchEnvs keeps one migrated database per benchmark: the framework calls a benchmark function
// several times (b.N = 1, then the real count) on the same *testing.B.
var benchEnvs sync.Map // *testing.B → *queueEnv

func benchQueue(b *testing.B, runners, concurrency int) {
	v, ok := benchEnvs.Load(b)
	if !ok {
		v, _ = benchEnvs.LoadOrStore(b, newQueueEnv(b, 32))
		b.Cleanup(func() { benchEnvs.Delete(b) })
	}
	e := v.(*queueEnv)
	ctx := context.Background()
	if _, err := e.pool.Exec(ctx, `TRUNCATE jobs`); err != nil {
		b.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO jobs (queue, kind) SELECT 'bench', 'noop' FROM generate_series(1, $1::int)`, b.N); err != nil {
		b.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `VACUUM ANALYZE jobs`); err != nil {
		b.Fatal(err)
	}

	var acked, cycles, cycleNanos, claimedByStore atomic.Int64
	allDone := make(chan struct{})
	store := &timedStore{JobStore: e.queue, cycles: &cycles, cycleNanos: &cycleNanos, claimed: &claimedByStore,
		afterAck: func(int64) {
			if acked.Add(1) == int64(b.N) {
				close(allDone)
			}
		}}
	handlers := map[string]job.JobHandler{"noop": func(context.Context, domain.Job) error { return nil }}
	rs := make([]*job.Runner, runners)
	for i := range rs {
		rs[i] = newRunner(b, store, runnerOpts{
			Queue: "bench", Owner: fmt.Sprintf("bench-%d", i), Concurrency: concurrency,
			Lease: 30 * time.Second, Poll: time.Second, // the production defaults
		}, handlers)
	}

	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	b.ResetTimer()
	began := time.Now()
	for _, r := range rs {
		wg.Go(func() { _ = r.Run(runCtx) })
	}
	select {
	case <-allDone:
	case <-time.After(10 * time.Minute):
		b.Fatalf("only %d of %d jobs acked after 10 minutes", acked.Load(), b.N)
	}
	elapsed := time.Since(began)
	b.StopTimer()
	stop()
	wg.Wait()

	if n := e.count(b, `SELECT count(*) FROM jobs WHERE status = 'done'`); n != int64(b.N) {
		b.Fatalf("%d of %d jobs done", n, b.N)
	}
	var claimed int64
	for _, r := range rs {
		claimed += r.Stats.Claimed.Load()
	}
	if claimed != int64(b.N) {
		b.Fatalf("%d jobs claimed for %d enqueued", claimed, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(b.N)/float64(cycles.Load()), "jobs/cycle")
	b.ReportMetric(float64(cycleNanos.Load())/float64(cycles.Load())/1e6, "ms/cycle")
	b.ReportMetric(0, "ns/op") // the rate is the result; time per job is its inverse
}

// timedStore counts the queue's cycles (one AckAndClaim each), the jobs they claim and the time
// they take.
type timedStore struct {
	job.JobStore
	cycles, cycleNanos, claimed *atomic.Int64
	afterAck                    func(id int64)
}

func (s *timedStore) AckAndClaim(ctx context.Context, done []domain.Job, c domain.JobClaim) ([]bool, []domain.Job, error) {
	began := time.Now()
	acked, jobs, err := s.JobStore.AckAndClaim(ctx, done, c)
	s.cycles.Add(1)
	s.cycleNanos.Add(int64(time.Since(began)))
	s.claimed.Add(int64(len(jobs)))
	for i, j := range done {
		if err == nil && acked[i] {
			s.afterAck(j.ID)
		}
	}
	return acked, jobs, err
}
