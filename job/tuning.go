package job

import "time"

// Tuning constants of the PostgreSQL job queue, the outbox relay and the scheduled jobs
// (settings until 0.1.0; tests that need another value set it on the config they build).
const (
	// QueueConcurrency jobs run at once per process: sending mail and codes waits on the network,
	// and four keep the queue's own pool (3 + one connection per four workers) small.
	QueueConcurrency = 4
	// QueueLease is renewed while a handler runs, so it only bounds how long a crashed worker's
	// job waits; QueueReapEvery returns expired leases to the queue.
	QueueLease     = 30 * time.Second
	QueueReapEvery = 5 * time.Second
	// QueuePoll and OutboxPoll are fallbacks: LISTEN/NOTIFY wakes the workers at once (for a job
	// due later, at its due time: Runner.WakeAt), so a second only matters when a notification is
	// lost, for a retry's backoff, or for a job enqueued before the worker started.
	QueuePoll  = time.Second
	OutboxPoll = time.Second
	// OutboxRedeliverAfter must exceed the consumers' reclaim (events.ConsumerClaimIdle plus
	// events.ConsumerClaimEvery, 40 s), or a re-drive races a healthy reclaim; the re-drives back
	// off up to OutboxBackoffMax, and the OutboxMaxAttempts-th makes the event dead.
	OutboxRedeliverAfter = 2 * time.Minute
	OutboxBackoffMax     = 10 * time.Minute
	OutboxMaxAttempts    = 10

	// RankBatch articles per scan query keep one statement short; RankCutoff: a week-old article
	// is no longer "hot"; RankTimeout: a run longer than this keeps the previous list; RankLockTTL
	// is renewed every third of it, so a dead holder's lock frees within 15 s.
	RankBatch   = 10000
	RankCutoff  = 7 * 24 * time.Hour
	RankTimeout = 30 * time.Second
	RankLockTTL = 15 * time.Second

	// SearchBackfillEvery: rows without a search document only come from older versions, so a
	// minute is soon enough and costs one cheap query.
	SearchBackfillEvery = time.Minute

	// RetentionBatch rows per delete statement, each its own transaction, with RetentionPause
	// between two: short statements and locks that leave room for the requests.
	RetentionBatch = 5000
	RetentionPause = 100 * time.Millisecond
)
