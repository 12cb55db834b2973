package domain

import "time"

// RetryPolicy is the one retry, backoff and dead-letter rule of the three queues: the PostgreSQL
// job queue (per job, MaxAttempts from its row), the outbox's re-drives (RedrivePolicy.Retry; its
// Delay is computed in SQL, on the database's clock, by the same formula) and the Redis Streams
// consumer (MaxAttempts bounds the deliveries of an entry; redelivery is paced by the claim idle).
type RetryPolicy struct {
	// MaxAttempts is how many runs (deliveries) an item gets; the one that reaches it makes the
	// item dead. 0: no bound.
	MaxAttempts int
	// Base is the wait after the first failed attempt; it doubles per attempt, at most Max.
	Base, Max time.Duration
}

// Delay is the wait before the retry that follows the given attempt (1 for the first run):
// Base·2^(attempt-1), capped at Max. A Base of zero or above Max is Max.
func (p RetryPolicy) Delay(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		if d > p.Max/2 { // doubling would pass Max (or overflow when Max is near the largest duration)
			d = p.Max
			break
		}
		d *= 2
	}
	if d > p.Max || d <= 0 {
		d = p.Max
	}
	return d
}

// Backoff is Delay with equal jitter, spread over [d/2, d] so items that failed together do not
// retry together. rnd is a random number in [0, 1).
func (p RetryPolicy) Backoff(attempt int, rnd float64) time.Duration {
	d := p.Delay(attempt)
	half := d / 2
	return half + time.Duration(rnd*float64(d-half))
}

// Exhausted reports whether the item whose attempt-th run just failed has no run left: it is dead
// (a job), dead-lettered (a stream entry) or given up (an outbox event).
func (p RetryPolicy) Exhausted(attempt int) bool {
	return p.MaxAttempts > 0 && attempt >= p.MaxAttempts
}
