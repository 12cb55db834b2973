// Package metrics is the Prometheus adapter: it records HTTP requests and exposes, at scrape
// time, the counters the other adapters already keep (cache hits and fallbacks, singleflight
// sharing, stream consumers, the job queue, the outbox, the ranking job) and the pool statistics
// of pgx and go-redis. It is an adapter folder of its own: nothing else imports Prometheus.
package metrics
