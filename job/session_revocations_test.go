package job_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/job"
)

// keeper is a fake RevocationKeeper: each renewal reports itself on calls and returns the next
// scripted result.
type keeper struct {
	results chan error // one per renewal, filled by the test before it lets one happen
	calls   chan struct{}
	asked   chan struct{}
}

func (k *keeper) RenewRevocations(context.Context) error {
	k.calls <- struct{}{}
	return <-k.results
}

func (k *keeper) RenewalRequests() <-chan struct{} { return k.asked }

// TestRevocationRenewer: renews at start, every turn and at once when asked; logs a failure when
// renewals start failing and a recovery when they work again, not every turn; while failing,
// requests wait for the turn.
func TestRevocationRenewer(t *testing.T) {
	t.Parallel()
	k := &keeper{results: make(chan error, 1), calls: make(chan struct{}, 1), asked: make(chan struct{}, 1)}
	type wait struct{ fire chan time.Time }
	waits := make(chan wait, 1)
	after := func(time.Duration) <-chan time.Time {
		w := wait{fire: make(chan time.Time, 1)}
		waits <- w
		return w.fire
	}
	logs := &rankLogs{}
	r := job.NewRevocationRenewer(k, job.RevocationRenewerConfig{Every: time.Second, Timeout: time.Second}, after, slog.New(logs))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(ctx) }()

	// renewal lets one renewal happen with result err and returns once the renewer waits again
	// (for its turn, or also for a request).
	// A renewer that does not renew when it should fails the test after a while (a guard, not
	// a synchronization: every step waits for the event itself).
	renewal := func(t *testing.T, err error) wait {
		t.Helper()
		select {
		case <-k.calls:
		case <-time.After(10 * time.Second):
			t.Fatal("no renewal where one was due")
		}
		k.results <- err
		return <-waits
	}
	failed := errors.New("redis: connection refused")

	w := renewal(t, nil) // at start
	k.asked <- struct{}{}
	w2 := renewal(t, nil) // asked: without its turn
	if len(w.fire) != 0 {
		t.Fatal("the turn was used up by the request")
	}
	w2.fire <- time.Time{}
	w = renewal(t, failed) // its turn
	w.fire <- time.Time{}
	w = renewal(t, failed)
	k.asked <- struct{}{} // while failing: waits for the turn
	select {
	case <-k.calls:
		t.Fatal("a request hurried a failing renewer")
	default:
	}
	w.fire <- time.Time{}
	_ = renewal(t, nil) // its turn: recovered
	_ = renewal(t, nil) // the request that waited is served now

	cancel()
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := r.Stats.Renewed.Load(), int64(4); got != want {
		t.Errorf("Renewed = %d, want %d", got, want)
	}
	if got, want := r.Stats.Failed.Load(), int64(2); got != want {
		t.Errorf("Failed = %d, want %d", got, want)
	}
	want := []string{
		"revocation lease could not be renewed from here; if no instance can, every instance checks access tokens in PostgreSQL",
		"revocation lease renewed again",
	}
	if got := logs.messages(); !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q: one line when renewals start failing, one when they work again", got, want)
	}
}
