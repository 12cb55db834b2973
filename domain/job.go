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

// JobStatuses is every job status, in the order of a job's life.
var JobStatuses = []JobStatus{JobReady, JobRunning, JobDone, JobDead}

// Valid reports whether s is one of JobStatuses.
func (s JobStatus) Valid() bool {
	switch s {
	case JobReady, JobRunning, JobDone, JobDead:
		return true
	}
	return false
}

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
	// TraceParent is the W3C traceparent of the span that enqueued the job ("" when tracing was
	// off): its run joins that trace.
	TraceParent string
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
