package domain_test

import (
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestRetryPolicy_Exhausted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max, attempt int
		want         bool
	}{
		{max: 3, attempt: 1, want: false},
		{max: 3, attempt: 2, want: false},
		{max: 3, attempt: 3, want: true}, // the run that reaches the limit is the last
		{max: 3, attempt: 4, want: true},
		{max: 1, attempt: 1, want: true},
		{max: 0, attempt: 1 << 20, want: false}, // no bound
	} {
		if got := (domain.RetryPolicy{MaxAttempts: tc.max}).Exhausted(tc.attempt); got != tc.want {
			t.Errorf("RetryPolicy{MaxAttempts: %d}.Exhausted(%d) = %v, want %v", tc.max, tc.attempt, got, tc.want)
		}
	}
}

func TestRetryPolicy_DelayIsTheBackoffsBound(t *testing.T) {
	t.Parallel()
	p := domain.RetryPolicy{Base: 10, Max: 30}
	for attempt, want := range map[int]int64{0: 10, 1: 10, 2: 20, 3: 30, 60: 30} {
		if got := p.Delay(attempt); int64(got) != want {
			t.Errorf("Delay(%d) = %d, want %d", attempt, got, want)
		}
		if top := p.Backoff(attempt, 0.999999999); top > p.Delay(attempt) {
			t.Errorf("Backoff(%d) = %d exceeds Delay %d", attempt, top, p.Delay(attempt))
		}
	}
}
