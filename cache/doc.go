// Package cache holds inkwell's Redis adapters: one typed cache per aggregate that hides key layout,
// TTLs and serialization, and the generic read-through helper they share (singleflight, null
// markers, TTL jitter, fallback to the loader when Redis fails).
package cache
