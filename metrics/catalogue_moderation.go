package metrics

// Moderation: actions by kind (per instance, counted after their commits), and the report queue
// (fleet-wide, read from PostgreSQL at scrape time like the job and outbox gauges: max over
// instances, never the sum).
var (
	ModerationActions = counter("inkwell_moderation_actions_total",
		"Moderation actions this instance committed, by action (hide, unhide, suspend, unsuspend, role, dismiss, suspension-ended).", "action")

	ModerationOpenCases = scraped("inkwell_moderation_open_cases",
		"Reported targets waiting in the moderation queue (open cases; one per article, comment or user however often reported).")
	ModerationOpenReports         = scraped("inkwell_moderation_open_reports", "Open reports: the reports of the open cases.")
	ModerationOldestOpenReportAge = scraped("inkwell_moderation_oldest_open_report_age_seconds",
		"Age of the oldest open case of the moderation queue: how long its first report has waited (0: the queue is empty).")
)
