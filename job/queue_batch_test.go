package job_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
)

// cycleLog records what each AckAndClaim call carried.
type cycleLog struct {
	mu     sync.Mutex
	acks   []int // acks per call that carried any
	claims int   // calls that asked for work
}

func (l *cycleLog) store(inner job.JobStore) *hookedStore {
	s := &hookedStore{JobStore: inner}
	s.beforeCycle = func(done []domain.Job, c domain.JobClaim) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(done) > 0 {
			l.acks = append(l.acks, len(done))
		}
		if c.Limit > 0 {
			l.claims++
		}
	}
	return s
}

func (l *cycleLog) ackBatches() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.acks...)
}

// TestRunnerBatchesAcks: jobs that finish while others still run wait for them, and all their
// acks go to the database in one statement — together with the claim of the next batch.
func TestRunnerBatchesAcks(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 12)
	const queue, slots = "batch", 8
	var log cycleLog
	// Every handler waits until all eight have started, so all eight are claimed and running
	// before the first one finishes.
	var started sync.WaitGroup
	started.Add(slots)
	var ran atomic.Int64
	r := newRunner(t, log.store(e.queue), runnerOpts{Queue: queue, Concurrency: slots, AckWait: time.Hour}, map[string]job.JobHandler{
		"work": func(context.Context, domain.Job) error {
			if ran.Add(1) <= slots {
				started.Done()
				started.Wait()
			}
			return nil
		},
	})
	for range 2 * slots {
		e.enqueue(t, jobOpts{Queue: queue})
	}
	runInBackground(t, r)
	testenv.WaitUntil(t, "all 16 jobs are done", func() bool {
		return e.count(t, `SELECT count(*) FROM jobs WHERE queue = $1 AND status = 'done'`, queue) == 2*slots
	})
	// The first eight finish while the others run, so they are acknowledged in one statement,
	// which also claims the second eight.
	if got := log.ackBatches(); len(got) == 0 || got[0] != slots {
		t.Fatalf("ack batches %v, want the first to carry all %d", got, slots)
	}
	// The runner counts an ack after its statement returns, a moment after the rows read done.
	testenv.WaitUntil(t, "the runner counts the acks", func() bool { return r.Stats.Done.Load() >= 2*slots })
	if r.Stats.Done.Load() != 2*slots {
		t.Fatalf("done %d, want %d", r.Stats.Done.Load(), 2*slots)
	}
}

// TestRunnerAckWaitBoundsTheBatch: a finished job is not held hostage by a slow one running
// beside it — after AckWait its ack goes alone.
func TestRunnerAckWaitBoundsTheBatch(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	const queue = "ack-wait"
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := newRunner(t, e.queue, runnerOpts{Queue: queue, Concurrency: 2, AckWait: 5 * time.Millisecond, Grace: -1}, map[string]job.JobHandler{
		"slow": func(ctx context.Context, _ domain.Job) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		},
		"fast": func(context.Context, domain.Job) error { return nil },
	})
	slow := e.enqueue(t, jobOpts{Queue: queue, Kind: "slow"})
	fast := e.enqueue(t, jobOpts{Queue: queue, Kind: "fast"})
	runInBackground(t, r)
	testenv.WaitUntil(t, "the fast job is acknowledged while the slow one runs", func() bool {
		return e.get(t, fast).Status == domain.JobDone
	})
	if j := e.get(t, slow); j.Status != domain.JobRunning {
		t.Fatalf("the slow job is %s, want still running", j.Status)
	}
}

// TestRunnerKeepsAcksThroughStoreFailure: when the statement that records acks fails, nothing is
// lost: the acks are kept and recorded on a later turn.
func TestRunnerKeepsAcksThroughStoreFailure(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	const queue = "ack-retry"
	var failures atomic.Int64
	store := &hookedStore{JobStore: e.queue, beforeAck: func(context.Context, int64) error {
		if failures.Add(1) <= 3 {
			return errors.New("connection reset by peer")
		}
		return nil
	}}
	r := newRunner(t, store, runnerOpts{Queue: queue, Poll: 10 * time.Millisecond}, map[string]job.JobHandler{
		"work": func(context.Context, domain.Job) error { return nil },
	})
	id := e.enqueue(t, jobOpts{Queue: queue})
	runInBackground(t, r)
	testenv.WaitUntil(t, "the job is acknowledged after three failed attempts", func() bool {
		return r.Stats.Done.Load() == 1 // counted once the ack's statement has returned
	})
	if j := e.get(t, id); j.Attempts != 1 || j.Generation != 1 {
		t.Fatalf("job %+v: ran again instead of having its ack retried", j)
	}
	if r.Stats.Done.Load() != 1 || r.Stats.LostLeases.Load() != 0 {
		t.Fatalf("done %d, lost leases %d", r.Stats.Done.Load(), r.Stats.LostLeases.Load())
	}
}
