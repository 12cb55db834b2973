package domain

import (
	"errors"
	"time"
)

// JobStatus is where a background job is in its life.
type JobStatus string

// Job statuses: ready → running → done, or back to ready for a retry, or dead when out of attempts.
const (
	JobReady   JobStatus = "ready"
	JobRunning JobStatus = "running"
	JobDone    JobStatus = "done"
	JobDead    JobStatus = "dead"
)

// Job is one unit of durable background work.
type Job struct {
	ID          int64
	Queue       string
	Kind        string
	Payload     []byte // JSON
	Status      JobStatus
	Priority    int
	AvailableAt time.Time
	LeaseOwner  string
	LeaseUntil  time.Time
	Generation  int64 // fences the lease holder's writes
	Attempts    int
	MaxAttempts int
	LastError   string
	UniqueKey   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewJob is a job to enqueue. A non-empty UniqueKey makes enqueueing it twice (in one queue) a no-op.
type NewJob struct {
	Queue       string
	Kind        string
	Payload     []byte
	Priority    int
	RunAt       time.Time // zero: now, by the database's clock
	MaxAttempts int       // zero: DefaultMaxAttempts
	UniqueKey   string
	// DeleteWhenDone deletes the row once the job is done, for payloads that must not stay at
	// rest (send_code).
	DeleteWhenDone bool
}

// JobClaim asks for up to Limit ready jobs of Queue (best priority, oldest first), leased to
// Owner for Lease. The lease is a duration: the queue stamps and compares its instants by the
// database's clock, so instances whose clocks disagree still agree on when a lease runs out.
type JobClaim struct {
	Queue, Owner string
	Limit        int
	Lease        time.Duration
}

// DefaultMaxAttempts is how often a job runs before it is dead, unless it says otherwise.
const DefaultMaxAttempts = 5

// ErrPermanent marks a job failure that no retry can fix (bad payload, a refused request): the job
// goes straight to dead. Wrap it: fmt.Errorf("%w: ...", domain.ErrPermanent).
var ErrPermanent = errors.New("permanent failure")

// Backoff is the wait before the retry that follows the given attempt (1 for the first run):
// base·2^(attempt-1), capped at max, with jitter spreading it over [d/2, d] so jobs that failed
// together do not retry together. rnd is a random number in [0, 1).
func Backoff(attempt int, base, max time.Duration, rnd float64) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := base
	for i := 1; i < attempt && d < max; i++ {
		if d > max/2 { // doubling would pass max (or overflow when max is near the largest duration)
			d = max
			break
		}
		d *= 2
	}
	if d > max || d <= 0 {
		d = max
	}
	half := d / 2
	return half + time.Duration(rnd*float64(d-half))
}
