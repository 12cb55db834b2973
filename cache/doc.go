// Package cache holds inkwell's Redis adapters: one typed cache per aggregate that hides key layout,
// TTLs and serialization, and the one read-through path they share (cache/readthrough.go: an
// in-process tier, a batch-aware singleflight, null markers, TTL jitter, fallback to the loader
// when Redis fails, and the hooks every change of a cached key passes). Counters is the coherence
// component of the interaction counters: repositories tell it which counts a unit of work changes,
// and it mirrors, repairs and refills the Redis hashes.
package cache
