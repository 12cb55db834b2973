// Package durable is the room of durable delivery in PostgreSQL: the job queue (jobs, with
// LISTEN/NOTIFY wake-ups), the outbox the relay publishes to Redis Streams, and the store of
// idempotent requests' answers. The core repositories write jobs and outbox rows in their own units
// of work through EnqueueTx, WriteArticleEvent and MarkOutboxApplied; this package imports no core
// repository.
package durable
