package ioc

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
)

// Removed is a setting of an earlier release that this one no longer reads, and what took its
// place: a constant next to the code it tunes, or another setting.
type Removed struct {
	Name string // its flag; its variable is envName(Name)
	Now  string // what replaced it, for the warning and the flag's error
}

// Env is the removed setting's environment variable.
func (r Removed) Env() string { return envName(r.Name) }

// constant describes a tuning knob that became a constant with the value it had by default.
func constant(where, value string) string {
	return "now the constant " + where + " (" + value + ", its default before)"
}

// RemovedSettings are the settings an earlier release read and this one does not: tuning knobs
// became constants with their old defaults (issue 27, then cache-local-ttl and
// redis-breaker-open), the retention of internal tables is fixed, the SMTP server is one URL,
// the Sentinel master's name is part of REDIS_URL, the code webhook's URL is the value of
// INKWELL_CODE_SENDER, and the session timeouts are parameters of DATABASE_URL. The CHANGELOG
// lists the same under "Upgrading".
var RemovedSettings = []Removed{
	{"db-connect-timeout", constant("ioc.DBConnectTimeout", "5s") + "; set connect_timeout in DATABASE_URL for another bound"},
	{"db-fallback-concurrency", constant("cache.FallbackConcurrency", "half the pool's connections")},
	{"db-fallback-wait", constant("cache.FallbackWait", "100ms")},
	{"idempotency-wait", constant("inkwell.IdempotencyWait", "3s")},
	{"redis-breaker-failures", constant("cache.BreakerFailures", "5")},
	{"argon2-iterations", constant("auth.OWASPMinimum.Iterations", "2")},
	{"argon2-parallelism", constant("auth.OWASPMinimum.Parallelism", "1")},
	{"cache-ttl", constant("cache.TTL", "10m")},
	{"cache-ttl-jitter", constant("cache.TTLJitter", "2m")},
	{"cache-null-ttl", constant("cache.NullTTL", "30s")},
	{"cache-load-timeout", constant("cache.LoadTimeout", "3s")},
	{"read-buffer", constant("events.ReadBuffer", "10000")},
	{"read-publish-batch", constant("events.ReadPublishBatch", "256")},
	{"read-publish-flush", constant("events.ReadPublishFlush", "20ms")},
	{"read-tally-flush", constant("events.ReadTallyFlush", "100ms")},
	{"read-tally-max", constant("events.ReadTallyMax", "10000")},
	{"consumer-batch", constant("events.ConsumerBatch", "1000")},
	{"consumer-wait", constant("events.ConsumerWait", "200ms")},
	{"consumer-claim-idle", constant("events.ConsumerClaimIdle", "30s")},
	{"consumer-claim-every", constant("events.ConsumerClaimEvery", "10s")},
	{"consumer-max-deliveries", constant("events.ConsumerMaxDeliveries", "10")},
	{"stream-maxlen", constant("events.StreamMaxLen", "100000")},
	{"stream-trim-every", constant("events.StreamTrimEvery", "10s")},
	{"queue-concurrency", constant("job.QueueConcurrency", "4")},
	{"queue-lease", constant("job.QueueLease", "30s")},
	{"queue-poll", constant("job.QueuePoll", "1s")},
	{"queue-reap-every", constant("job.QueueReapEvery", "5s")},
	{"outbox-poll", constant("job.OutboxPoll", "1s")},
	{"outbox-redeliver-after", constant("job.OutboxRedeliverAfter", "2m")},
	{"outbox-max-attempts", constant("job.OutboxMaxAttempts", "10")},
	{"outbox-backoff-max", constant("job.OutboxBackoffMax", "10m")},
	{"mail-timeout", constant("delivery.SMTPTimeout", "10s")},
	{"code-resend", constant("cache.CodeResend", "1m")},
	{"code-attempts", constant("cache.CodeAttempts", "3")},
	{"code-failure-budget", constant("cache.CodeFailureBudget", "10")},
	{"code-daily-sends", constant("cache.CodeDailySends", "10")},
	{"code-budget-window", constant("cache.CodeBudgetWindow", "24h")},
	{"code-global-sends", constant("cache.CodeGlobalSends", "600")},
	{"code-global-window", constant("cache.CodeGlobalWindow", "1m")},
	{"rank-batch", constant("job.RankBatch", "10000")},
	{"rank-cutoff", constant("job.RankCutoff", "168h")},
	{"rank-timeout", constant("job.RankTimeout", "30s")},
	{"rank-lock-ttl", constant("job.RankLockTTL", "15s")},
	{"search-backfill-every", constant("job.SearchBackfillEvery", "1m")},
	{"retention-batch", constant("job.RetentionBatch", "5000")},
	{"retention-pause", constant("job.RetentionPause", "100ms")},
	{"retention-inbox", constant("inkwell.RetentionInbox", "1d")},
	{"retention-jobs-done", constant("inkwell.RetentionJobsDone", "7d")},
	{"retention-jobs-dead", constant("inkwell.RetentionJobsDead", "30d")},
	{"retention-idempotency", constant("inkwell.RetentionIdempotency", "1d")},
	{"retention-codes", constant("inkwell.RetentionCodes", "1h")},
	{"retention-outbox", constant("inkwell.RetentionOutbox", "1d")},
	{"retention-outbox-dead", constant("inkwell.RetentionOutboxDead", "30d")},
	{"redis-breaker-open", constant("cache.BreakerOpenFor", "1s")},
	{"cache-local-ttl", constant("cache.LocalTTL", "2s")},
	{"mail-host", mailURLPart},
	{"mail-port", mailURLPart},
	{"mail-username", mailURLPart},
	{"mail-password", mailURLPart},
	{"mail-tls", mailURLPart},
	{"redis-sentinel-master", "part of REDIS_URL in sentinel mode, as ?master_name= (redis://s1:26379/0?master_name=mymaster&addr=s2:26379)"},
	{"db-statement-timeout", "part of DATABASE_URL, as ?statement_timeout= (milliseconds, or a PostgreSQL duration such as 30s; 0 keeps the server's setting; 30s when absent)"},
	{"db-idle-in-tx-timeout", "part of DATABASE_URL, as ?idle_in_transaction_session_timeout= (milliseconds, or a PostgreSQL duration such as 1min; 0 keeps the server's setting; 1m when absent)"},
	{"code-webhook-url", "now the value of INKWELL_CODE_SENDER, which takes log or the webhook's http(s) URL (INKWELL_CODE_SENDER=https://sms.example.com/codes, no longer webhook)"},
}

// mailURLPart replaced the SMTP settings folded into INKWELL_MAIL_URL.
const mailURLPart = "part of INKWELL_MAIL_URL (smtp://user:password@host:port?tls=starttls|tls|none)"

// removedInEnvironment are the removed settings whose variable is set.
func removedInEnvironment() []Removed {
	var set []Removed
	for _, r := range RemovedSettings {
		if _, ok := os.LookupEnv(r.Env()); ok {
			set = append(set, r)
		}
	}
	return set
}

// registerRemoved makes each removed setting a flag that fails the parse with what replaced it:
// a command line that still sets one is wrong, and says so rather than doing something else.
func registerRemoved(fs *flag.FlagSet) {
	for _, r := range RemovedSettings {
		fs.Func(r.Name, removedUsage, func(string) error {
			return fmt.Errorf("-%s was removed: %s", r.Name, r.Now)
		})
	}
}

// removedUsage marks the removed flags, which --help leaves out.
const removedUsage = "removed setting"

// IsRemoved reports whether f is a removed setting's flag (registered by Flags to explain itself).
func IsRemoved(f *flag.Flag) bool { return f.Usage == removedUsage }

// WarnRemoved logs one warning for each removed setting still set in the environment when Flags
// ran, naming it and what replaced it: the process starts (its value is ignored), but the
// operator learns the variable does nothing now.
func (c *Config) WarnRemoved(log *slog.Logger) {
	for _, r := range c.removed {
		log.Warn("a removed setting is set in the environment and ignored", "env", r.Env(), "replaced_by", r.Now)
	}
}
