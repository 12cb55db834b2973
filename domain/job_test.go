package domain_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// cappedExp is min(base·2^(attempt-1), max) computed without overflow, the delay Backoff jitters.
func cappedExp(attempt int, base, max time.Duration) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := base
	for i := 1; i < attempt; i++ {
		if d >= max || d > math.MaxInt64/2 {
			return max
		}
		d *= 2
	}
	if d > max || d <= 0 {
		return max
	}
	return d
}

// TestBackoff_Properties checks, over many random inputs, that the delay before the retry after
// attempt n lies in [d/2, d] with d = min(base·2^(n-1), max), never exceeds max, and that both the
// bound and the delay for a fixed random draw never shrink as attempts grow.
func TestBackoff_Properties(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 42))
	durations := []func() time.Duration{
		func() time.Duration { return time.Duration(1 + rnd.Int64N(int64(time.Second))) },             // sub-second
		func() time.Duration { return time.Duration(1 + rnd.Int64N(int64(time.Hour))) },               // realistic
		func() time.Duration { return time.Duration(1 + rnd.Int64N(math.MaxInt64-1)) },                // anything
		func() time.Duration { return time.Duration(math.MaxInt64 - rnd.Int64N(int64(time.Second))) }, // overflow edge
	}
	for range 20_000 {
		base := durations[rnd.IntN(len(durations))]()
		maxD := durations[rnd.IntN(len(durations))]()
		draw := rnd.Float64()
		prevBound, prevDelay := time.Duration(0), time.Duration(0)
		for attempt := -1; attempt <= 70; attempt++ {
			d := cappedExp(attempt, base, maxD)
			got := domain.RetryPolicy{Base: base, Max: maxD}.Backoff(attempt, draw)
			if got < d/2 || got > d {
				t.Fatalf("Backoff(%d, %v, %v, %v) = %v, want within [%v, %v]", attempt, base, maxD, draw, got, d/2, d)
			}
			if got > maxD {
				t.Fatalf("Backoff(%d, %v, %v, %v) = %v exceeds max", attempt, base, maxD, draw, got)
			}
			if d < prevBound || got < prevDelay {
				t.Fatalf("attempt %d (base %v, max %v, draw %v): bound %v delay %v after bound %v delay %v: shrank",
					attempt, base, maxD, draw, d, got, prevBound, prevDelay)
			}
			prevBound, prevDelay = d, got
		}
	}
}

func TestBackoff_Examples(t *testing.T) {
	t.Parallel()
	const s = time.Second
	for _, tc := range []struct {
		name      string
		attempt   int
		base, max time.Duration
		draw      float64
		want      time.Duration
	}{
		{"first_retry_no_jitter_draw", 1, s, time.Minute, 0, s / 2},
		{"first_retry_top_of_range", 1, s, time.Minute, 0.999999999, s - 1},
		{"doubles_per_attempt", 4, s, time.Minute, 0, 4 * s},
		{"capped_at_max", 10, s, time.Minute, 0.5, 45 * s},
		{"huge_attempt_stays_capped", 1 << 20, s, time.Minute, 0, 30 * s},
		{"attempt_zero_is_the_first", 0, s, time.Minute, 0, s / 2},
		{"base_above_max_is_max", 1, time.Hour, time.Minute, 0, 30 * s},
		{"zero_base_is_max", 3, 0, time.Minute, 0, 30 * s},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := (domain.RetryPolicy{Base: tc.base, Max: tc.max}).Backoff(tc.attempt, tc.draw); got != tc.want {
				t.Fatalf("Backoff(%d, %v, %v, %v) = %v, want %v", tc.attempt, tc.base, tc.max, tc.draw, got, tc.want)
			}
		})
	}
}
