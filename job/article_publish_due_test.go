package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository/durable"
)

// TestRunnerWakesAtAJobsDueTime (#32): a job enqueued for later is announced with its due time,
// and an idle runner whose poll is an hour away claims it when it comes due, not at the next poll.
// The due time is the database's available_at: the claim finds the job only once it has come, so
// the run starting at all proves the runner woke at (or after) it.
func TestRunnerWakesAtAJobsDueTime(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	const queue = "due"
	idle := make(chan struct{}, 1)
	store := &hookedStore{JobStore: e.queue, afterClaim: func(_ context.Context, jobs []domain.Job, err error) {
		if err == nil && len(jobs) == 0 {
			select {
			case idle <- struct{}{}:
			default:
			}
		}
	}}
	ran := make(chan time.Time, 1)
	r := newRunner(t, store, runnerOpts{Queue: queue, Poll: time.Hour}, map[string]job.JobHandler{
		"work": func(_ context.Context, j domain.Job) error { ran <- j.AvailableAt; return nil },
	})
	dues := make(chan time.Time, 4)
	listenCtx, stopListening := context.WithCancel(context.Background())
	listening := make(chan error, 1)
	go func() {
		listening <- e.queue.ListenDue(listenCtx, func(q string, due time.Time) {
			if q == queue {
				dues <- due
				r.WakeAt(due)
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

	runAt := time.Now().Add(300 * time.Millisecond).Truncate(time.Microsecond)
	if _, err := e.queue.Enqueue(context.Background(), domain.NewJob{Queue: queue, Kind: "work", RunAt: runAt}); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Recv(t, dues, "the enqueue's notification"); !got.Equal(runAt) {
		t.Fatalf("the notification says due %v, want %v", got, runAt)
	}
	if got := testenv.Recv(t, ran, "the job to run at its due time (poll is 1h)"); !got.Equal(runAt) {
		t.Fatalf("ran a job available at %v, want %v", got, runAt)
	}
}

func TestNotifyPayload(t *testing.T) {
	t.Parallel()
	at := time.UnixMicro(1_900_000_000_123_456)
	for _, tc := range []struct {
		queue string
		runAt time.Time
	}{{"default", time.Time{}}, {"default", at}, {"mail", at}} {
		q, due := durable.ParseNotifyPayload(durable.NotifyPayload(tc.queue, tc.runAt))
		if q != tc.queue || !due.Equal(tc.runAt) {
			t.Errorf("round trip of %q at %v: %q at %v", tc.queue, tc.runAt, q, due)
		}
	}
	if q, due := durable.ParseNotifyPayload("default\tsoon"); q != "default" || !due.IsZero() {
		t.Errorf("unreadable time: %q at %v, want default now", q, due)
	}
}
