// Package metrics is the Prometheus adapter: it records HTTP requests and job runs, and holds the
// catalogue of every other metric (catalogue_*.go: each declared once with its name, help and
// label names). The composition root binds each declaration to the counter an adapter already
// keeps (cache hits and fallbacks, stream consumers, the job queue, the outbox, the ranking job)
// or to the pool statistics of pgx and go-redis, read at scrape time. It is an adapter folder of
// its own: nothing else imports Prometheus.
package metrics
