package domain

import (
	"strconv"
	"strings"
	"time"
)

// OutboxStatus is where an outbox event is in its life: pending (to be published) → published
// (in the stream) → applied (by its consumer), or dead (its attempts ran out).
type OutboxStatus string

// The outbox statuses.
const (
	OutboxPending   OutboxStatus = "pending"
	OutboxPublished OutboxStatus = "published"
	OutboxApplied   OutboxStatus = "applied"
	OutboxDead      OutboxStatus = "dead"
)

// Valid reports whether s is one of the statuses.
func (s OutboxStatus) Valid() bool {
	switch s {
	case OutboxPending, OutboxPublished, OutboxApplied, OutboxDead:
		return true
	}
	return false
}

// outboxEventPrefix starts the id consumers deduplicate an outbox event by.
const outboxEventPrefix = "outbox-"

// ParseOutboxEventID returns the outbox row id of an event id made by OutboxEvent.EventID; false
// for any other id.
func ParseOutboxEventID(eventID string) (int64, bool) {
	rest, ok := strings.CutPrefix(eventID, outboxEventPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0
}

// OutboxEntry is one outbox row as an operator sees it.
type OutboxEntry struct {
	ID            int64
	Topic         string
	AggregateID   int64
	Status        OutboxStatus
	Attempts      int
	CreatedAt     time.Time
	PublishedAt   *time.Time
	AppliedAt     *time.Time
	NextAttemptAt time.Time
	LastError     string
}

// OutboxRedriven is one event a re-drive pass returned to the relay (pending) or gave up on
// (dead).
type OutboxRedriven struct {
	ID       int64
	Status   OutboxStatus
	Attempts int
}

// RedrivePolicy says when a published event that was not applied is published again, and when
// the outbox gives up on it.
type RedrivePolicy struct {
	// After is the redelivery window: an event published longer ago than this and not applied is
	// re-driven. It must exceed the time a healthy consumer takes to apply an entry, including a
	// reclaim after a consumer died (events.ConsumerClaimIdle and a claim tick).
	After time.Duration
	// Retry bounds the re-drives: Retry.MaxAttempts at most, the one that reaches it making the
	// event dead; a re-driven event is due again after Retry.Delay(attempts), which the outbox
	// computes in SQL on the database's clock.
	Retry RetryPolicy
}
