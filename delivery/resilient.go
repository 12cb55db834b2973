package delivery

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sony/gobreaker/v2"
)

// ResilienceConfig tunes the wrapper.
type ResilienceConfig struct {
	Timeout     time.Duration // per attempt
	Retries     int           // extra attempts for transient failures
	RetryDelay  time.Duration // doubled after each retry; each wait is drawn from its upper half
	MaxInFlight int           // bulkhead: sends running at once
	// Breaker: after FailuresToOpen consecutive failures the breaker opens and refuses sends for
	// OpenFor; then it lets one trial through (half-open) and closes again if it succeeds.
	FailuresToOpen uint32
	OpenFor        time.Duration
}

// ErrBreakerOpen means the gateway failed repeatedly and sends are refused for a while.
var ErrBreakerOpen = errors.New("delivery gateway unavailable (circuit open)")

// ErrBusy means too many sends are running; the caller (a queued job) retries later.
var ErrBusy = errors.New("delivery busy: too many sends in flight")

// Resilient wraps a Sender with a timeout per attempt, retries for transient errors, a circuit
// breaker and a bulkhead, so a slow or failing gateway can neither hold many goroutines nor be
// hammered while it is down.
type Resilient struct {
	next    Sender
	cfg     ResilienceConfig
	breaker *gobreaker.CircuitBreaker[struct{}]
	slots   chan struct{}
	sleep   func(ctx context.Context, d time.Duration) error
	jitter  func(d time.Duration) time.Duration // the wait before a retry whose nominal delay is d
}

// NewResilient wraps next.
func NewResilient(next Sender, cfg ResilienceConfig) *Resilient {
	if cfg.MaxInFlight < 1 {
		cfg.MaxInFlight = 1
	}
	cb := gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:    "code-delivery",
		Timeout: cfg.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= cfg.FailuresToOpen
		},
		// A rejected message says nothing about the gateway's health, nor does a caller that gave up.
		IsSuccessful: func(err error) bool { return err == nil || errors.Is(err, ErrRejected) },
		IsExcluded:   func(err error) bool { return errors.Is(err, errCallerGone) },
	})
	return &Resilient{next: next, cfg: cfg, breaker: cb, slots: make(chan struct{}, cfg.MaxInFlight), sleep: sleepCtx, jitter: equalJitter}
}

// equalJitter draws a retry's wait from [d/2, d]. A gateway's hiccup fails every send in flight
// at once (up to MaxInFlight, on every instance): without jitter their retries would all arrive
// together again, RetryDelay later, and then 2·RetryDelay later. Half the delay is kept, so a
// retry never comes much sooner than the schedule says.
func equalJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d/2 + rand.N(d-d/2+1)
}

// errCallerGone marks a failure that happened because the caller's context ended.
var errCallerGone = errors.New("delivery abandoned: the caller's context ended")

// Send delivers m or reports why not.
func (r *Resilient) Send(ctx context.Context, m Message) error {
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	default:
		return ErrBusy
	}
	delay := r.cfg.RetryDelay
	var err error
	for attempt := 0; attempt <= r.cfg.Retries; attempt++ {
		if attempt > 0 {
			if serr := r.sleep(ctx, r.jitter(delay)); serr != nil {
				return errors.Join(err, serr)
			}
			delay *= 2
		}
		_, err = r.breaker.Execute(func() (struct{}, error) {
			actx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
			defer cancel()
			err := r.next.Send(actx, m)
			if err != nil && ctx.Err() != nil {
				// The caller gave up (a shutdown, a lost lease): that says nothing of the gateway.
				return struct{}{}, fmt.Errorf("%w (%w): %w", errCallerGone, ctx.Err(), err)
			}
			return struct{}{}, err
		})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errCallerGone):
			return err
		case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
			return fmt.Errorf("%w: %v", ErrBreakerOpen, err)
		case errors.Is(err, ErrRejected):
			return err
		}
	}
	return err
}

// State is the breaker's state (closed, half-open, open), for metrics and tests.
func (r *Resilient) State() string { return r.breaker.State().String() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// SendCode delivers a one-time code (the job layer's port): a sign-in code (purpose "") or a
// step-up code ("step_up").
func (r *Resilient) SendCode(ctx context.Context, channel, address, purpose, code string) error {
	return r.Send(ctx, Message{Channel: channel, Address: address, Code: code, Purpose: Purpose(purpose)})
}

// SendAccountMail delivers a code mailed to an account: email verification or password reset
// (the job layer's port).
func (r *Resilient) SendAccountMail(ctx context.Context, purpose, address, code string) error {
	return r.Send(ctx, Message{Channel: "email", Address: address, Code: code, Purpose: Purpose(purpose)})
}
