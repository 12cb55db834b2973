package metrics

// The caches: read-through tiers, the invalidation channel between instances, the PostgreSQL
// fallback while Redis fails, and the Redis client under them.
var (
	// Per read-through cache ("user", "article", "viewer").
	CacheHits          = counter("inkwell_cache_hits_total", "Read-through cache hits.", "cache")
	CacheMisses        = counter("inkwell_cache_misses_total", "Read-through cache misses.", "cache")
	CacheLocalHits     = counter("inkwell_cache_local_hits_total", "Reads answered by the in-process tier (also counted as hits).", "cache")
	CacheNullHits      = counter("inkwell_cache_null_hits_total", "Reads answered by a 'does not exist' marker.", "cache")
	CacheFallbacks     = counter("inkwell_cache_fallbacks_total", "Reads served from PostgreSQL because Redis failed.", "cache")
	CacheLoads         = counter("inkwell_cache_loads_total", "Loads from PostgreSQL.", "cache")
	SingleflightShared = counter("inkwell_singleflight_shared_total", "Callers that shared another caller's load.", "cache")

	CacheFallbackRefused = counter("inkwell_cache_fallback_refused_total",
		"Cache reads answered 503 because every PostgreSQL fallback slot stayed taken while Redis failed.")
	CacheFallbackInUse = gauge("inkwell_cache_fallback_in_use",
		"PostgreSQL fallback loads running now (of cache.FallbackConcurrency, half the pool).")

	CacheInvalidationSubscribed = gauge("inkwell_cache_invalidation_subscribed",
		"1 while the cache invalidation channel is subscribed; at 0 the in-process cache tiers are off (reads go to Redis).")
	CacheInvalidationsPublished = counter("inkwell_cache_invalidations_published_total",
		"Cache changes broadcast to the other instances (one message per change).")
	CacheInvalidationPublishFailures = counter("inkwell_cache_invalidation_publish_failures_total",
		"Cache changes not broadcast: the other instances' in-process copies stay until they expire.")
	CacheInvalidationsReceived = counter("inkwell_cache_invalidations_received_total",
		"Cache changes of other instances dropped from the in-process tiers.")
	CacheInvalidationSubscriptionLosses = counter("inkwell_cache_invalidation_subscription_losses_total",
		"Times the cache invalidation subscription was lost (the tiers went off).")
	CacheInvalidationRepairsPending = gauge("inkwell_cache_invalidation_repairs_pending",
		"Cache invalidations Redis did not take, still being retried by this instance (their entries may be served stale by instances that reach Redis).")
	CacheInvalidationRepairFailures = counter("inkwell_cache_invalidation_repair_failures_total",
		"Rounds of invalidation retries that left some behind (Redis still failing from here).")

	RedisBreakerOpen = gauge("inkwell_redis_breaker_open",
		"1 while the Redis circuit breaker refuses calls (Redis failing; requests use PostgreSQL).")
	RedisBreakerRejected = counter("inkwell_redis_breaker_rejected_total", "Redis calls refused by the open circuit breaker.")
	RedisPoolTotalConns  = gauge("inkwell_redis_pool_total_conns", "Redis connections open.")
	RedisPoolIdleConns   = gauge("inkwell_redis_pool_idle_conns", "Idle Redis connections.")
	RedisPoolTimeouts    = counter("inkwell_redis_pool_timeouts_total", "Waits for a Redis connection that timed out.")
)
