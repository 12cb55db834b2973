package metrics

// Sessions and revocation, idempotent requests, and the PostgreSQL pools.
var (
	SessionPostgresChecks = counter("inkwell_session_postgres_checks_total",
		"Access tokens checked in PostgreSQL: Redis failed or held no revocation lease.")
	RevocationMemoryHits = counter("inkwell_revocation_memory_hits_total",
		"Access tokens whose session this instance remembered as not revoked (no Redis round trip).")
	RevocationsUnconfirmed = counter("inkwell_revocations_unconfirmed_total",
		"Revocations some instance did not acknowledge in time, answered once every in-process memory older than the mark had ended.")
	RevocationsDelayed  = counter("inkwell_revocations_delayed_total", "Revocations whose Redis mark failed at first.")
	RevocationsUnmarked = counter("inkwell_revocations_unmarked_total",
		"Revocations answered without their Redis mark, after every older revocation lease ended.")
	RevocationLeaseRenewals = counter("inkwell_revocation_lease_renewals_total", "Revocation lease renewals by this instance.")
	RevocationLeaseFailures = counter("inkwell_revocation_lease_failures_total", "Revocation lease renewals by this instance that failed.")
	RevocationLeaseFailing  = gauge("inkwell_revocation_lease_failing", "1 while this instance cannot renew the revocation lease.")

	IdempotencyRequests = counter("inkwell_idempotency_requests_total", "Requests with an Idempotency-Key, by how they ended: executed, replayed (a stored answer), "+
		"mismatch (the key was used for another request: 422), in_flight (the request holding the key did not finish in time: 409), "+
		"commit_unknown (the COMMIT did not answer: 503, the write may or may not stand).", "outcome")

	// Per pgx pool ("api", "queue", "search").
	PgxpoolAcquiredConns = gauge("inkwell_pgxpool_acquired_conns", "PostgreSQL connections in use.", "pool")
	PgxpoolIdleConns     = gauge("inkwell_pgxpool_idle_conns", "Idle PostgreSQL connections.", "pool")
	PgxpoolTotalConns    = gauge("inkwell_pgxpool_total_conns", "PostgreSQL connections open.", "pool")
	PgxpoolMaxConns      = gauge("inkwell_pgxpool_max_conns", "Connections the pool may open (pool_max_conns).", "pool")
	PgxpoolEmptyAcquire  = counter("inkwell_pgxpool_empty_acquire_total", "Acquires that had to wait for a connection.", "pool")
	// Read replicas (DATABASE_REPLICA_URLS).
	RoutedReads = counter("inkwell_db_routed_reads_total", "Reads that tolerate a little lag, by where they went: replica, primary "+
		"(no replica had replayed enough, or the reader had just written), fallback (a replica failed the read; it ran again on the primary).", "target")
	ReplicaLagBytes         = gauge("inkwell_replica_lag_bytes", "How far a read replica's replay is behind the primary's last sampled WAL position, in bytes (-1: its position is unknown).", "replica")
	PgxpoolEmptyAcquireWait = counter("inkwell_pgxpool_empty_acquire_wait_seconds_total",
		"Time acquires spent waiting for a connection (saturation: its rate is the mean number of waiters).", "pool")
)
