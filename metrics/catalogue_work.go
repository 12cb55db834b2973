package metrics

// Background work: the read-event stream and its consumers, the job queue, the outbox relay,
// preloads, and the ranking and retention jobs.
var (
	ReadEventsPublished = counter("inkwell_read_events_published_total", "Read events written to the stream.")
	ReadEventsDropped   = counter("inkwell_read_events_dropped_total", "Read events dropped: buffer full.")
	ReadEventsFailed    = counter("inkwell_read_events_failed_total", "Read events lost: the stream write failed.")

	AnonymousReadsBatched       = counter("inkwell_anonymous_reads_batched_total", "Anonymous reads taken from the in-process tally into batches.")
	AnonymousReadsSent          = counter("inkwell_anonymous_reads_sent_total", "Anonymous reads written to the stream inside batches.")
	AnonymousReadBatches        = counter("inkwell_anonymous_read_batches_total", "Batches of anonymous reads written to the stream.")
	AnonymousReadBatchesRetried = counter("inkwell_anonymous_read_batches_retried_total", "Batch writes that failed and were kept for the next flush.")
	AnonymousReadsLost          = counter("inkwell_anonymous_reads_lost_total", "Anonymous reads lost: their batch could not be written.")

	// Per consumer group.
	StreamBatches      = counter("inkwell_stream_batches_total", "Batches handled by stream consumers.", "group")
	StreamEntries      = counter("inkwell_stream_entries_total", "Entries handled (batch sizes add up here).", "group")
	StreamReclaimed    = counter("inkwell_stream_reclaimed_total", "Entries reclaimed from dead consumers.", "group")
	StreamFailures     = counter("inkwell_stream_failures_total", "Batches that failed and stay pending.", "group")
	StreamDeadLettered = counter("inkwell_stream_dead_lettered_total", "Entries that ran out of deliveries and were moved to <stream>:dead.", "group")

	// Per queue, as this instance's runners saw them.
	JobAttempts    = counter("inkwell_jobs_attempts_total", "Job attempts started (every claim of a job is one).", "queue")
	JobsDone       = counter("inkwell_jobs_done_total", "Jobs finished.", "queue")
	JobsRetried    = counter("inkwell_jobs_retried_total", "Job attempts that failed and will retry.", "queue")
	JobsDead       = counter("inkwell_jobs_dead_total", "Jobs that ran out of attempts or failed permanently.", "queue")
	JobsLostLeases = counter("inkwell_jobs_lost_leases_total", "Job outcomes refused because the lease was lost.", "queue")

	OutboxRelayed  = counter("inkwell_outbox_relayed_total", "Outbox events written to the stream.")
	OutboxRedriven = counter("inkwell_outbox_redriven_total", "Outbox events this instance published again: not applied within the redelivery window.")
	OutboxDied     = counter("inkwell_outbox_died_total", "Outbox events this instance marked dead: their re-drives ran out.")

	Preloads        = counter("inkwell_preloads_total", "Article detail preloads that ran.")
	PreloadsDropped = counter("inkwell_preloads_dropped_total", "Article detail preloads dropped: queue full.")

	RankRuns         = counter("inkwell_rank_runs_total", "Ranking runs by outcome.", "outcome")
	RankLastDuration = gauge("inkwell_rank_last_duration_seconds", "Duration of the last ranking run.")
	RankLockHeld     = gauge("inkwell_rank_lock_held", "1 while this instance holds the ranking lock (and so ranks at every tick).")

	// Summed over the fleet's instances, the counters are everything the fleet deleted; the
	// last-run gauges are of the last run this instance made while holding the lock (the newest
	// over the fleet is the max).
	RetentionDeletedRows = counter("inkwell_retention_deleted_rows_total", "Rows the retention job deleted, by policy (mostly a table's name).", "table")
	RetentionRuns        = counter("inkwell_retention_runs_total",
		"Retention runs by outcome (skipped-not-leader: another instance held the lock).", "outcome")
	RetentionLastRunTimestamp = gauge("inkwell_retention_last_run_timestamp_seconds",
		"When this instance's last retention run ended (Unix time; 0: none yet).")
	RetentionLastRunDuration = gauge("inkwell_retention_last_run_duration_seconds", "Duration of this instance's last retention run.")
)

// Fleet-wide gauges, read from the shared PostgreSQL and Redis at scrape time, so every instance
// exports the same value (give or take the moment of its scrape). Dashboards and alerts take the
// max over instances, never the sum. Exporting them from one instance only (a lock holder) was
// rejected: the ranking lock lives in Redis, so during a Redis outage or a leader handover no
// instance would export them, and the series would vanish when they matter most. The price is one
// small set of queries per instance per scrape (the jobs and outbox tables stay bounded by
// retention).
var (
	Jobs                     = scraped("inkwell_jobs", "Jobs by queue and status.", "queue", "status")
	JobsOldestReadyAge       = scraped("inkwell_jobs_oldest_ready_age_seconds", "Age of the oldest ready job.", "queue")
	OutboxBacklog            = scraped("inkwell_outbox_backlog", "Outbox events not yet relayed.")
	OutboxDead               = scraped("inkwell_outbox_dead", "Outbox events that ran out of attempts (see `inkwell outbox list --status dead`).")
	OutboxOldestUnappliedAge = scraped("inkwell_outbox_oldest_unapplied_age_seconds",
		"Age of the oldest outbox event its consumer has not applied (0: none), on PostgreSQL's clock.")
	StreamLag     = scraped("inkwell_stream_lag", "Entries not yet delivered to a consumer group.", "stream", "group")
	StreamPending = scraped("inkwell_stream_pending", "Entries delivered but not acknowledged.", "stream", "group")
)
