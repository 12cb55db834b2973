package inkwell

import (
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/job"
)

// TestTuningConstantsKeepTheirRules: the rules Validate applied to these values while they were
// settings (until 0.1.0) still hold of the constants that replaced them.
func TestTuningConstantsKeepTheirRules(t *testing.T) {
	for _, rule := range []struct {
		ok   bool
		what string
	}{
		{RetentionInbox >= time.Hour, "inbox records outlive any redelivery (at least 1h), or a redelivered event is applied twice"},
		{RetentionIdempotency >= 24*time.Hour, "Idempotency-Key records are kept at least the 24 hours they are replayed"},
		{job.OutboxRedeliverAfter > events.ConsumerClaimIdle+events.ConsumerClaimEvery, "a re-drive must not race a healthy consumer's reclaim"},
		{job.OutboxBackoffMax > 0 && job.OutboxMaxAttempts >= 1 && events.ConsumerMaxDeliveries >= 1, "re-drives and deliveries are bounded and back off"},
		{cache.CodeResend >= time.Second && cache.CodeBudgetWindow >= time.Second && cache.CodeGlobalWindow >= time.Second, "code windows are at least 1s"},
		{cache.CodeAttempts >= 1 && cache.CodeFailureBudget >= 1 && cache.CodeDailySends >= 1 && cache.CodeGlobalSends >= 1, "code budgets are at least 1"},
		{cache.TTL > 0 && cache.NullTTL > 0 && cache.TTLJitter >= 0 && cache.LoadTimeout > 0, "cache TTLs and the load timeout are positive"},
		{events.ReadBuffer >= 1 && events.ReadPublishBatch >= 1 && events.ReadTallyMax >= 1 && events.ConsumerBatch >= 1 && events.StreamMaxLen >= 1, "buffers, batches and the stream length are at least 1"},
		{events.ReadPublishFlush > 0 && events.ReadTallyFlush > 0 && events.ConsumerWait > 0 && events.ConsumerClaimIdle > 0 && events.ConsumerClaimEvery > 0 && events.StreamTrimEvery > 0, "read-event intervals are positive"},
		{job.QueueConcurrency >= 1 && job.QueueLease >= time.Second && job.QueuePoll > 0 && job.QueueReapEvery > 0 && job.OutboxPoll > 0, "the queue runs at least one job, leases at least 1s, intervals positive"},
		{job.RankBatch >= 1 && job.RankCutoff > 0 && job.RankTimeout > 0 && job.RankLockTTL >= 300*time.Millisecond, "ranking batch, cutoff and timeout positive, the lock TTL at least 300ms"},
		{job.RetentionBatch >= 1 && job.RetentionBatch <= 100_000 && job.RetentionPause >= 0, "retention batches of 1..100000 rows"},
		{job.SearchBackfillEvery > 0 && cache.FallbackWait >= 0 && cache.FallbackConcurrency >= 0 && cache.BreakerFailures >= 1, "backfill interval, fallback limit and breaker are sane"},
		{auth.OWASPMinimum.Iterations >= 2 && auth.OWASPMinimum.Parallelism >= 1, "Argon2id iterations and lanes are OWASP's minimum"},
	} {
		if !rule.ok {
			t.Errorf("tuning constants break a rule: %s", rule.what)
		}
	}
}
