package delivery

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// These tests are inside the package to replace the retry sleep with a recorder: retries are
// counted, never timed.

var errGateway = errors.New("gateway hiccup") // a transient failure

// fakeSender answers from a script of results (the last one repeats) and can hold calls until
// released.
type fakeSender struct {
	mu      sync.Mutex
	results []error
	calls   int
	msgs    []Message
	hasDL   []bool        // whether each call's context had a deadline
	hold    chan struct{} // non-nil: each call waits here (or for its context)
	entered chan struct{} // non-nil: each call signals here once it is inside
	onCall  func(n int)   // called with the call number, inside the call
}

func (f *fakeSender) Send(ctx context.Context, m Message) error {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.msgs = append(f.msgs, m)
	_, ok := ctx.Deadline()
	f.hasDL = append(f.hasDL, ok)
	var res error
	if len(f.results) > 0 {
		res = f.results[min(n, len(f.results))-1]
	}
	hold, entered, onCall := f.hold, f.entered, f.onCall
	f.mu.Unlock()
	if onCall != nil {
		onCall(n)
	}
	if entered != nil {
		entered <- struct{}{}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return res
}

func (f *fakeSender) script(results ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = results
}

func (f *fakeSender) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// resilientOpts configure the wrapper under test; zero fields get defaults.
type resilientOpts struct {
	Timeout        time.Duration // zero: a minute
	Retries        int
	RetryDelay     time.Duration // zero: 10ms (recorded, not slept)
	MaxInFlight    int           // zero: 4
	FailuresToOpen uint32        // zero: 3
	OpenFor        time.Duration // zero: an hour (the breaker stays open for the test)
}

// newResilient wraps f; the delays it would sleep between retries are recorded instead, without
// jitter (the nominal schedule; TestResilient_RetryDelaysAreJittered covers the jitter).
func newResilient(f Sender, o resilientOpts) (*Resilient, *[]time.Duration) {
	r, delays := newJitteredResilient(f, o)
	r.jitter = func(d time.Duration) time.Duration { return d }
	return r, delays
}

// newJitteredResilient is newResilient with the wrapper's own jitter.
func newJitteredResilient(f Sender, o resilientOpts) (*Resilient, *[]time.Duration) {
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = 10 * time.Millisecond
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = 4
	}
	if o.FailuresToOpen == 0 {
		o.FailuresToOpen = 3
	}
	if o.OpenFor == 0 {
		o.OpenFor = time.Hour
	}
	r := NewResilient(f, ResilienceConfig{Timeout: o.Timeout, Retries: o.Retries, RetryDelay: o.RetryDelay,
		MaxInFlight: o.MaxInFlight, FailuresToOpen: o.FailuresToOpen, OpenFor: o.OpenFor})
	var mu sync.Mutex
	delays := &[]time.Duration{}
	r.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*delays = append(*delays, d)
		mu.Unlock()
		return ctx.Err()
	}
	return r, delays
}

var msg = Message{Channel: "email", Address: "a@example.com", Code: "123456"}

func waitState(t *testing.T, r *Resilient, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.State() != want {
		if time.Now().After(deadline) {
			t.Fatalf("breaker still %s after 10 s, want %s", r.State(), want)
		}
		time.Sleep(time.Millisecond) // waiting for the open period to run out
	}
}

func TestResilient_Breaker(t *testing.T) {
	t.Parallel()

	t.Run("opens_after_consecutive_failures_and_refuses_without_calling", func(t *testing.T) {
		t.Parallel()
		f := &fakeSender{results: []error{errGateway}}
		r, _ := newResilient(f, resilientOpts{FailuresToOpen: 3})
		for i := 1; i <= 3; i++ {
			if err := r.Send(context.Background(), msg); !errors.Is(err, errGateway) || errors.Is(err, ErrBreakerOpen) {
				t.Fatalf("send %d: %v, want the gateway's error", i, err)
			}
		}
		if r.State() != "open" {
			t.Fatalf("state %s after 3 failures, want open", r.State())
		}
		for range 5 {
			if err := r.Send(context.Background(), msg); !errors.Is(err, ErrBreakerOpen) {
				t.Fatalf("send while open: %v, want ErrBreakerOpen", err)
			}
		}
		if f.callCount() != 3 {
			t.Fatalf("the gateway was called %d times, want 3: an open breaker must not call it", f.callCount())
		}
	})
	t.Run("callers_that_give_up_do_not_open_it", func(t *testing.T) {
		t.Parallel()
		f := &fakeSender{hold: make(chan struct{})} // every call waits until its context ends
		r, _ := newResilient(f, resilientOpts{FailuresToOpen: 1})
		for i := range 3 {
			ctx, cancel := context.WithCancel(context.Background())
			f.onCall = func(int) { cancel() } // the caller gives up while the gateway is working
			if err := r.Send(ctx, msg); !errors.Is(err, context.Canceled) {
				t.Fatalf("send %d: %v, want the caller's cancellation", i+1, err)
			}
		}
		if r.State() != "closed" {
			t.Fatalf("state %s after callers gave up, want closed: that says nothing of the gateway", r.State())
		}
		if f.callCount() != 3 {
			t.Fatalf("the gateway was called %d times, want 3 (one per send, no retries after the caller left)", f.callCount())
		}
	})
	t.Run("half_opens_after_open_for_and_one_success_closes_it", func(t *testing.T) {
		t.Parallel()
		f := &fakeSender{results: []error{errGateway}}
		r, _ := newResilient(f, resilientOpts{FailuresToOpen: 2, OpenFor: 50 * time.Millisecond})
		for range 2 {
			_ = r.Send(context.Background(), msg)
		}
		if r.State() == "closed" { // open — or half-open already, on a slow machine
			t.Fatal("still closed after 2 failures")
		}
		waitState(t, r, "half-open")
		f.script(nil)
		if err := r.Send(context.Background(), msg); err != nil {
			t.Fatalf("trial send: %v", err)
		}
		if r.State() != "closed" || f.callCount() != 3 {
			t.Fatalf("state %s after a successful trial (calls %d), want closed after 3 calls", r.State(), f.callCount())
		}
	})
	t.Run("failed_trial_opens_it_again", func(t *testing.T) {
		t.Parallel()
		f := &fakeSender{results: []error{errGateway}}
		// Long enough that the checks right after the failed trial still see it open.
		r, _ := newResilient(f, resilientOpts{FailuresToOpen: 2, OpenFor: 300 * time.Millisecond})
		for range 2 {
			_ = r.Send(context.Background(), msg)
		}
		waitState(t, r, "half-open")
		if err := r.Send(context.Background(), msg); !errors.Is(err, errGateway) {
			t.Fatalf("trial send: %v, want the gateway's error", err)
		}
		if r.State() != "open" {
			t.Fatalf("state %s after a failed trial, want open", r.State())
		}
		if err := r.Send(context.Background(), msg); !errors.Is(err, ErrBreakerOpen) || f.callCount() != 3 {
			t.Fatalf("send after the failed trial: %v after %d calls", err, f.callCount())
		}
	})
	t.Run("only_one_trial_while_half_open", func(t *testing.T) {
		t.Parallel()
		f := &fakeSender{results: []error{errGateway}}
		r, _ := newResilient(f, resilientOpts{FailuresToOpen: 1, OpenFor: 50 * time.Millisecond})
		_ = r.Send(context.Background(), msg)
		waitState(t, r, "half-open")
		f.mu.Lock()
		f.results, f.hold, f.entered = []error{nil}, make(chan struct{}), make(chan struct{}, 1)
		f.mu.Unlock()
		trial := make(chan error, 1)
		go func() { trial <- r.Send(context.Background(), msg) }()
		<-f.entered
		if err := r.Send(context.Background(), msg); !errors.Is(err, ErrBreakerOpen) {
			t.Fatalf("second send during the trial: %v, want ErrBreakerOpen", err)
		}
		close(f.hold)
		if err := <-trial; err != nil || r.State() != "closed" {
			t.Fatalf("trial: %v, state %s", err, r.State())
		}
	})
	t.Run("rejections_do_not_count_and_reset_the_failure_streak", func(t *testing.T) {
		t.Parallel()
		rejected := fmt.Errorf("%w: status 400", ErrRejected)
		f := &fakeSender{}
		r, _ := newResilient(f, resilientOpts{FailuresToOpen: 3})
		f.script(rejected)
		for range 10 {
			if err := r.Send(context.Background(), msg); !errors.Is(err, ErrRejected) {
				t.Fatalf("rejected send: %v", err)
			}
		}
		if r.State() != "closed" {
			t.Fatalf("state %s after rejections, want closed", r.State())
		}
		// failure, failure, rejection, failure, failure: never three failures in a row.
		f.mu.Lock()
		f.calls = 0
		f.mu.Unlock()
		f.script(errGateway, errGateway, rejected, errGateway, errGateway, errGateway)
		for i := 1; i <= 5; i++ {
			_ = r.Send(context.Background(), msg)
			if r.State() != "closed" {
				t.Fatalf("state %s after send %d, want closed", r.State(), i)
			}
		}
		_ = r.Send(context.Background(), msg)
		if r.State() != "open" {
			t.Fatalf("state %s after three failures in a row, want open", r.State())
		}
	})
}

func TestResilient_Retries(t *testing.T) {
	t.Parallel()
	rejected := fmt.Errorf("%w: status 422", ErrRejected)
	for _, tc := range []struct {
		name       string
		retries    int
		script     []error
		wantCalls  int
		wantDelays []time.Duration
		wantErr    error // nil: success
	}{
		{"transient_errors_are_retried_retries_times", 2, []error{errGateway}, 3, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}, errGateway},
		{"delay_doubles_each_retry", 4, []error{errGateway}, 5, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}, errGateway},
		{"success_after_a_transient_error", 2, []error{errGateway, nil}, 2, []time.Duration{10 * time.Millisecond}, nil},
		{"no_retries_configured", 0, []error{errGateway}, 1, nil, errGateway},
		{"rejection_is_not_retried", 3, []error{rejected}, 1, nil, ErrRejected},
		{"rejection_after_a_transient_error_stops_retrying", 3, []error{errGateway, rejected}, 2, []time.Duration{10 * time.Millisecond}, ErrRejected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeSender{results: tc.script}
			r, delays := newResilient(f, resilientOpts{Retries: tc.retries, FailuresToOpen: 100})
			err := r.Send(context.Background(), msg)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("send: %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("send: %v, want %v", err, tc.wantErr)
			}
			if f.callCount() != tc.wantCalls || !slices.Equal(*delays, tc.wantDelays) {
				t.Fatalf("calls %d with delays %v, want %d with %v", f.callCount(), *delays, tc.wantCalls, tc.wantDelays)
			}
			if errors.Is(err, ErrRejected) && !errors.Is(err, domain.ErrPermanent) {
				t.Fatalf("a rejection must be a permanent job failure: %v", err)
			}
		})
	}

	t.Run("breaker_opening_mid_retries_stops_them", func(t *testing.T) {
		t.Parallel()
		f := &fakeSender{results: []error{errGateway}}
		r, _ := newResilient(f, resilientOpts{Retries: 5, FailuresToOpen: 2})
		if err := r.Send(context.Background(), msg); !errors.Is(err, ErrBreakerOpen) {
			t.Fatalf("send: %v, want ErrBreakerOpen once the breaker opened", err)
		}
		if f.callCount() != 2 {
			t.Fatalf("%d calls, want 2", f.callCount())
		}
	})
	t.Run("caller_cancellation_during_the_retry_wait_ends_the_send", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		f := &fakeSender{results: []error{errGateway}, onCall: func(int) { cancel() }}
		r, _ := newResilient(f, resilientOpts{Retries: 3, FailuresToOpen: 100})
		err := r.Send(ctx, msg)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errGateway) || f.callCount() != 1 {
			t.Fatalf("send: %v after %d calls, want the gateway error joined with context.Canceled after 1", err, f.callCount())
		}
	})
	t.Run("each_attempt_has_the_timeout", func(t *testing.T) {
		t.Parallel()
		f := &fakeSender{hold: make(chan struct{})} // never answers
		r, _ := newResilient(f, resilientOpts{Timeout: 20 * time.Millisecond, Retries: 1, FailuresToOpen: 100})
		err := r.Send(context.Background(), msg)
		if !errors.Is(err, context.DeadlineExceeded) || f.callCount() != 2 {
			t.Fatalf("send: %v after %d calls, want a deadline error after 2 attempts", err, f.callCount())
		}
		if !reflect.DeepEqual(f.hasDL, []bool{true, true}) {
			t.Fatalf("attempt contexts with deadlines: %v", f.hasDL)
		}
	})
}

func TestResilient_Bulkhead(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	f := &fakeSender{hold: hold, entered: make(chan struct{}, 2)}
	r, _ := newResilient(f, resilientOpts{MaxInFlight: 2})
	results := make(chan error, 2)
	for range 2 {
		go func() { results <- r.Send(context.Background(), msg) }()
	}
	<-f.entered
	<-f.entered
	for range 3 {
		if err := r.Send(context.Background(), msg); !errors.Is(err, ErrBusy) {
			t.Fatalf("send with 2 of 2 in flight: %v, want ErrBusy", err)
		}
	}
	if f.callCount() != 2 {
		t.Fatalf("%d calls reached the gateway, want 2", f.callCount())
	}
	f.mu.Lock()
	f.hold, f.entered = nil, nil // later calls answer at once
	f.mu.Unlock()
	close(hold)
	for range 2 {
		if err := <-results; err != nil {
			t.Fatalf("held send: %v", err)
		}
	}
	if err := r.Send(context.Background(), msg); err != nil {
		t.Fatalf("send after the slots freed: %v", err)
	}
	if r.State() != "closed" {
		t.Fatalf("refusals by the bulkhead moved the breaker to %s", r.State())
	}
}

func TestResilient_SendCode(t *testing.T) {
	t.Parallel()
	f := &fakeSender{}
	r, _ := newResilient(f, resilientOpts{})
	if err := r.SendCode(context.Background(), "phone", "+4915112345678", "", "000042"); err != nil {
		t.Fatal(err)
	}
	if err := r.SendCode(context.Background(), "email", "a@example.com", "step_up", "000043"); err != nil {
		t.Fatal(err)
	}
	want := []Message{{Channel: "phone", Address: "+4915112345678", Code: "000042"},
		{Channel: "email", Address: "a@example.com", Code: "000043", Purpose: PurposeStepUp}}
	if !reflect.DeepEqual(f.msgs, want) {
		t.Fatalf("sent %+v, want %+v", f.msgs, want)
	}
}

// TestResilient_RetryDelaysAreJittered: each retry waits a random time in the upper half of its
// nominal delay (10 ms, then 20 ms), so sends that failed together do not retry in lockstep.
func TestResilient_RetryDelaysAreJittered(t *testing.T) {
	t.Parallel()
	f := &fakeSender{results: []error{errGateway}}
	r, delays := newJitteredResilient(f, resilientOpts{Retries: 2, FailuresToOpen: 1000})
	const sends = 20
	for range sends {
		if err := r.Send(context.Background(), msg); !errors.Is(err, errGateway) {
			t.Fatalf("send: %v", err)
		}
	}
	if len(*delays) != 2*sends {
		t.Fatalf("%d waits, want %d", len(*delays), 2*sends)
	}
	firsts := map[time.Duration]bool{}
	for i, d := range *delays {
		nominal := 10 * time.Millisecond << (i % 2)
		if d < nominal/2 || d > nominal {
			t.Fatalf("retry %d waited %s, want within [%s, %s]", i, d, nominal/2, nominal)
		}
		if i%2 == 0 {
			firsts[d] = true
		}
	}
	if len(firsts) < 2 {
		t.Fatalf("%d sends' first retries all waited %v: no jitter", sends, firsts)
	}
}
