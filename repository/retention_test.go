package repository_test

import (
	"context"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// seedForRetentionPlans adds to seedForPlans' data tens of thousands of rows to every table the
// retention job prunes, spread over their ages, and analyzes them.
func seedForRetentionPlans(t *testing.T, db *testenv.DB) {
	t.Helper()
	seedForPlans(t, db)
	for _, s := range []string{
		`INSERT INTO users (email, username, password_hash)
		 SELECT 'bulk' || g || '@example.com', 'bulk' || g, 'x' FROM generate_series(1, 20000) g`,
		`INSERT INTO inbox (consumer, event_id, received_at)
		 SELECT 'c' || (g % 3), 'e' || g, now() - g * interval '1 minute' FROM generate_series(1, 50000) g`,
		`INSERT INTO jobs (queue, kind, status, finished_at)
		 SELECT 'default', 'k', CASE WHEN g % 50 = 0 THEN 'dead' ELSE 'done' END, now() - g * interval '1 minute'
		 FROM generate_series(1, 50000) g`,
		`INSERT INTO jobs (queue, kind) SELECT 'default', 'k' FROM generate_series(1, 1000)`,
		`INSERT INTO sessions (id, user_id, created_at, last_used_at, revoked_at)
		 SELECT 's' || g, u.id, now() - g * interval '3 minutes', now() - g * interval '2 minutes',
		        CASE WHEN g % 10 = 0 THEN now() - g * interval '1 minute' END
		 FROM generate_series(1, 30000) g JOIN users u ON u.username = 'bulk' || (g % 20000 + 1)`,
		`INSERT INTO refresh_tokens (token_hash, session_id, expires_at)
		 SELECT ('t' || g || '-' || k)::bytea, 's' || g, now() + (30 * 1440 - g * 2 - k * 100) * interval '1 minute'
		 FROM generate_series(1, 30000) g, generate_series(1, 3) k`,
		`INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body, created_at)
		 SELECT 's', 'k' || g, 'h', 201, '{}', now() - g * interval '10 seconds' FROM generate_series(1, 30000) g`,
		`INSERT INTO login_codes (target, code_hash, attempts_left, sent_at, expires_at)
		 SELECT 't' || g, 'h', 3, now() - g * interval '1 minute', now() - g * interval '1 minute' + interval '10 minutes'
		 FROM generate_series(1, 20000) g`,
		`INSERT INTO login_code_meters (key, hits, window_ends)
		 SELECT 'fails:t' || g, 1, now() - g * interval '1 minute' + interval '1 day' FROM generate_series(1, 20000) g`,
		`INSERT INTO account_codes (user_id, purpose, email, code_hash, sent_at, expires_at)
		 SELECT u.id, p.purpose, u.email, 'h', now() - u.id * interval '1 minute', now() - u.id * interval '1 minute' + interval '1 hour'
		 FROM users u, (VALUES ('verify_email'), ('reset_password')) AS p(purpose)`,
		`INSERT INTO outbox (topic, aggregate_id, status, created_at)
		 SELECT 't', g, CASE WHEN g % 100 = 0 THEN 'dead' WHEN g % 100 = 1 THEN 'pending' ELSE 'applied' END, now() - g * interval '1 minute'
		 FROM generate_series(1, 30000) g`,
		`INSERT INTO uploads (user_id, object_key, content_type, width, height, bytes, sha256, variant_keys, created_at, referenced_at)
		 SELECT u.id, 'k' || g || '.png', 'image/png', 10, 10, 1000, 'k' || g, ARRAY['v' || g || '.png'],
		        now() - g * interval '1 minute', CASE WHEN g % 2 = 0 THEN now() - g * interval '30 seconds' END
		 FROM generate_series(1, 30000) g JOIN users u ON u.username = 'bulk' || (g % 20000 + 1)`,
		`INSERT INTO upload_references (owner_kind, owner_id, upload_id) SELECT 'article', id, id FROM uploads WHERE id % 3 = 0`,
		`INSERT INTO upload_totals (user_id, bytes) SELECT user_id, sum(bytes) FROM uploads GROUP BY user_id`,
		`INSERT INTO webhooks (owner_id, url, events, secret_enc) VALUES (NULL, 'https://hooks.example.com/', '{article.published}', 'enc')`,
		`INSERT INTO webhook_deliveries (webhook_id, seq, event_id, event_type, body, status, attempts, created_at)
		 SELECT (SELECT min(id) FROM webhooks), g, 'e' || g, 'article.published', '{}',
		        CASE WHEN g % 100 = 0 THEN 'dead' WHEN g % 100 = 1 THEN 'pending' ELSE 'delivered' END, 1, now() - g * interval '1 minute'
		 FROM generate_series(1, 30000) g`,
		`INSERT INTO webhook_attempts (delivery_id, attempt, latency_ms) SELECT id, 1, 10 FROM webhook_deliveries`,
		`ANALYZE`,
	} {
		if _, err := db.Pool.Exec(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Every retention statement reads its batch off an index in order and deletes by ctid, under a
// generic plan too (pgx prepares statements), so a batch costs its own size, not the table's: no
// sequential scan of any table, on a seeded and analyzed database.
func TestRetentionQueries_GenericPlansWalkAnIndex(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	seedForRetentionPlans(t, db)
	q := dao.New()
	ctx := context.Background()
	const age = "(86400, 5000)"
	cases := []struct {
		name string
		sql  func(dao.DBTX)
		args string
	}{
		{"inbox", func(c dao.DBTX) { _, _ = q.InboxPruneBatch(ctx, c, dao.InboxPruneBatchParams{}) }, age},
		{"inbox count", func(c dao.DBTX) { _, _ = q.InboxCountPrunable(ctx, c, dao.InboxCountPrunableParams{}) }, age},
		{"jobs done", func(c dao.DBTX) { _, _ = q.JobPruneDoneBatch(ctx, c, dao.JobPruneDoneBatchParams{}) }, age},
		{"jobs done count", func(c dao.DBTX) { _, _ = q.JobCountPrunableDone(ctx, c, dao.JobCountPrunableDoneParams{}) }, age},
		{"jobs dead", func(c dao.DBTX) { _, _ = q.JobPruneDeadBatch(ctx, c, dao.JobPruneDeadBatchParams{}) }, age},
		{"jobs dead count", func(c dao.DBTX) { _, _ = q.JobCountPrunableDead(ctx, c, dao.JobCountPrunableDeadParams{}) }, age},
		{"sessions revoked count", func(c dao.DBTX) {
			_, _ = q.SessionCountPrunableRevoked(ctx, c, dao.SessionCountPrunableRevokedParams{})
		}, age},
		{"account codes count", func(c dao.DBTX) { _, _ = q.AccountCodeCountPrunable(ctx, c, dao.AccountCodeCountPrunableParams{}) }, age},
		{"notifications", func(c dao.DBTX) { _, _ = q.NotificationPruneBatch(ctx, c, dao.NotificationPruneBatchParams{}) }, age},
		{"refresh tokens", func(c dao.DBTX) { _, _ = q.RefreshTokenPruneBatch(ctx, c, dao.RefreshTokenPruneBatchParams{}) }, age},
		{"sessions revoked", func(c dao.DBTX) { _, _ = q.SessionPruneRevokedBatch(ctx, c, dao.SessionPruneRevokedBatchParams{}) }, age},
		{"sessions idle", func(c dao.DBTX) { _, _ = q.SessionPruneIdleBatch(ctx, c, dao.SessionPruneIdleBatchParams{}) }, age},
		{"sessions idle count", func(c dao.DBTX) { _, _ = q.SessionCountPrunableIdle(ctx, c, dao.SessionCountPrunableIdleParams{}) }, age},
		{"idempotency keys", func(c dao.DBTX) { _, _ = q.IdempotencyPruneBatch(ctx, c, dao.IdempotencyPruneBatchParams{}) }, age},
		{"reading history", func(c dao.DBTX) { _, _ = q.ReadHistoryPruneBatch(ctx, c, dao.ReadHistoryPruneBatchParams{}) }, "(3600, 1000, 5000)"},
		{"reading history count", func(c dao.DBTX) { _, _ = q.ReadHistoryCountPrunable(ctx, c, dao.ReadHistoryCountPrunableParams{}) }, "(3600, 1000, 5000)"},
		{"login codes", func(c dao.DBTX) { _, _ = q.LoginCodePruneBatch(ctx, c, dao.LoginCodePruneBatchParams{}) }, age},
		{"login code meters", func(c dao.DBTX) { _, _ = q.LoginCodeMeterPruneBatch(ctx, c, dao.LoginCodeMeterPruneBatchParams{}) }, age},
		{"account codes", func(c dao.DBTX) { _, _ = q.AccountCodePruneBatch(ctx, c, dao.AccountCodePruneBatchParams{}) }, age},
		{"outbox applied", func(c dao.DBTX) { _, _ = q.OutboxPruneAppliedBatch(ctx, c, dao.OutboxPruneAppliedBatchParams{}) }, age},
		{"outbox applied count", func(c dao.DBTX) {
			_, _ = q.OutboxCountPrunableApplied(ctx, c, dao.OutboxCountPrunableAppliedParams{})
		}, age},
		{"outbox dead", func(c dao.DBTX) { _, _ = q.OutboxPruneDeadBatch(ctx, c, dao.OutboxPruneDeadBatchParams{}) }, age},
		{"outbox dead count", func(c dao.DBTX) { _, _ = q.OutboxCountPrunableDead(ctx, c, dao.OutboxCountPrunableDeadParams{}) }, age},
		{"webhook deliveries", func(c dao.DBTX) {
			_, _ = q.WebhookDeliveryPruneDoneBatch(ctx, c, dao.WebhookDeliveryPruneDoneBatchParams{})
		}, age},
		{"webhook deliveries count", func(c dao.DBTX) {
			_, _ = q.WebhookDeliveryCountPrunableDone(ctx, c, dao.WebhookDeliveryCountPrunableDoneParams{})
		}, age},
		{"uploads", func(c dao.DBTX) {
			_, _ = q.UploadPruneUnreferencedBatch(ctx, c, dao.UploadPruneUnreferencedBatchParams{})
		}, age},
		{"uploads count", func(c dao.DBTX) {
			_, _ = q.UploadCountPrunableUnreferenced(ctx, c, dao.UploadCountPrunableUnreferencedParams{})
		}, age},
	}
	// The index a statement must walk, where another one would also pass for "an index" (the
	// deliveries' primary key, backwards over the whole table, is not a bounded batch).
	wantIndex := map[string]string{
		"webhook deliveries":       "webhook_deliveries_done_idx",
		"webhook deliveries count": "webhook_deliveries_done_idx",
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sql := captureSQL(t, func(c dao.DBTX) {
				defer func() { _ = recover() }() // a :one query scans the nil row the capture returns
				tc.sql(c)
			})
			plan := genericPlan(t, db, sql, tc.args)
			if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "Index") {
				t.Errorf("the generic plan does not walk an index:\n%s", plan)
			}
			if idx, ok := wantIndex[tc.name]; ok && !strings.Contains(plan, idx) {
				t.Errorf("the generic plan does not walk %s:\n%s", idx, plan)
			}
			if strings.HasPrefix(strings.TrimSpace(sql), "DELETE") && !strings.Contains(plan, "Tid Scan") {
				t.Errorf("the delete does not find its rows by ctid:\n%s", plan)
			}
		})
	}
}
