-- The retention job's statements (job/retention.go, repository/retention.go). Each prune deletes
-- at most lim rows: the oldest prunable ones, read off an index in order (migration 00019) and
-- locked with SKIP LOCKED, so a batch neither waits on a row a request holds nor costs more as
-- the table grows; the job repeats it until a batch comes back short. Ages are measured with the
-- database's clock. Each count is what the prune would delete now, counted up to lim off the
-- same index, in the same order.

-- name: RetentionTryLock :one
-- The fleet-wide retention lock, a session-level advisory lock: held by the connection that took
-- it until RetentionUnlock, and released by PostgreSQL if that connection or its process dies.
SELECT pg_try_advisory_lock(hashtextextended('inkwell:retention', 0))::bool AS locked;

-- name: RetentionUnlock :one
SELECT pg_advisory_unlock(hashtextextended('inkwell:retention', 0))::bool AS unlocked;

-- name: InboxPruneBatch :execrows
-- Consumer inbox records older than keep: far past any redelivery of their event.
DELETE FROM inbox WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM inbox
    WHERE received_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY received_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: InboxCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM inbox WHERE received_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY received_at LIMIT @lim::int
) AS due;

-- name: JobPruneDoneBatch :execrows
-- Done jobs that finished longer than keep ago (jobs carrying a secret are deleted at their ack).
DELETE FROM jobs WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM jobs
    WHERE status = 'done' AND finished_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY status, finished_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: JobCountPrunableDone :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM jobs
    WHERE status = 'done' AND finished_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY status, finished_at
    LIMIT @lim::int
) AS due;

-- name: JobPruneDeadBatch :execrows
-- Dead jobs buried longer than keep ago: an operator had that long to retry them.
DELETE FROM jobs WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM jobs
    WHERE status = 'dead' AND finished_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY status, finished_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: JobCountPrunableDead :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM jobs
    WHERE status = 'dead' AND finished_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY status, finished_at
    LIMIT @lim::int
) AS due;

-- name: NotificationPruneBatch :execrows
-- Notifications older than keep, read or not.
DELETE FROM notifications WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM notifications
    WHERE created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY created_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: NotificationCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM notifications WHERE created_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY created_at LIMIT @lim::int
) AS due;

-- name: RefreshTokenPruneBatch :execrows
-- Refresh tokens that expired longer than keep ago, spent or not: an expired token is refused
-- whatever it is, so its row no longer decides anything.
DELETE FROM refresh_tokens WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM refresh_tokens
    WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY expires_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: RefreshTokenCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM refresh_tokens WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY expires_at LIMIT @lim::int
) AS due;

-- name: SessionPruneRevokedBatch :execrows
-- Sessions revoked longer than keep ago (the refresh-token lifetime plus a grace, so their tokens
-- are pruned already and the cascade deletes next to nothing). An unknown session counts as
-- revoked (SessionRepository.IsRevoked), so deleting one changes no answer.
DELETE FROM sessions WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM sessions
    WHERE revoked_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY revoked_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: SessionCountPrunableRevoked :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM sessions WHERE revoked_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY revoked_at LIMIT @lim::int
) AS due;

-- name: SessionPruneIdleBatch :execrows
-- Live sessions unused (not refreshed) for longer than keep whose newest refresh token has
-- expired: nothing can refresh them, and their last access token expired long ago. The newest
-- expiry is a subquery per candidate (an aggregate, so the planner keeps it a probe of
-- refresh_tokens_session_idx instead of joining every live token).
DELETE FROM sessions WHERE ctid = ANY(ARRAY(
    SELECT s.ctid FROM sessions s
    WHERE s.revoked_at IS NULL
      AND COALESCE(s.last_used_at, s.created_at) < now() - make_interval(secs => @keep_seconds::float8)
      AND COALESCE((SELECT max(r.expires_at) FROM refresh_tokens r WHERE r.session_id = s.id), '-infinity') <= now()
    ORDER BY COALESCE(s.last_used_at, s.created_at)
    LIMIT @lim::int
    FOR UPDATE OF s SKIP LOCKED));

-- name: SessionCountPrunableIdle :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM sessions s
    WHERE s.revoked_at IS NULL
      AND COALESCE(s.last_used_at, s.created_at) < now() - make_interval(secs => @keep_seconds::float8)
      AND COALESCE((SELECT max(r.expires_at) FROM refresh_tokens r WHERE r.session_id = s.id), '-infinity') <= now()
    ORDER BY COALESCE(s.last_used_at, s.created_at)
    LIMIT @lim::int
) AS due;

-- name: IdempotencyPruneBatch :execrows
-- Idempotency records older than keep (they are replayed for 24 hours).
DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM idempotency_keys
    WHERE created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY created_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: IdempotencyCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM idempotency_keys WHERE created_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY created_at LIMIT @lim::int
) AS due;

-- name: ReadHistoryPruneBatch :execrows
-- Cuts the history of every user who read in the last since_seconds to their newest keep rows. A
-- history grows only when its user reads, so the users who read since the last run are the only
-- ones it can have grown for: they are found by reading_history_read_at_idx, and each one's rows
-- past the cap by reading_history_recent_idx. A row re-read meanwhile is a new row version and is
-- not deleted (its ctid changed).
DELETE FROM reading_history WHERE ctid = ANY(ARRAY(
    SELECT old.ctid
    FROM (SELECT DISTINCT user_id FROM reading_history
          WHERE last_read_at > now() - make_interval(secs => @since_seconds::float8)) AS readers
    CROSS JOIN LATERAL (
        SELECT h.ctid FROM reading_history h
        WHERE h.user_id = readers.user_id
        ORDER BY h.last_read_at DESC, h.article_id DESC
        OFFSET @keep::int
    ) AS old
    LIMIT @lim::int));

-- name: ReadHistoryCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1
    FROM (SELECT DISTINCT user_id FROM reading_history
          WHERE last_read_at > now() - make_interval(secs => @since_seconds::float8)) AS readers
    CROSS JOIN LATERAL (
        SELECT 1 FROM reading_history h
        WHERE h.user_id = readers.user_id
        ORDER BY h.last_read_at DESC, h.article_id DESC
        OFFSET @keep::int
    ) AS old
    LIMIT @lim::int
) AS due;

-- name: LoginCodePruneBatch :execrows
-- Fallback login codes that expired longer than keep ago (spent ones stay until they expire, for
-- their resend window).
DELETE FROM login_codes WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM login_codes
    WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY expires_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: LoginCodeCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM login_codes WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY expires_at LIMIT @lim::int
) AS due;

-- name: LoginCodeMeterPruneBatch :execrows
-- Fallback meters whose window ended longer than keep ago (a passed window counts nothing).
DELETE FROM login_code_meters WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM login_code_meters
    WHERE window_ends < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY window_ends
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: LoginCodeMeterCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM login_code_meters WHERE window_ends < now() - make_interval(secs => @keep_seconds::float8) ORDER BY window_ends LIMIT @lim::int
) AS due;

-- name: AccountCodePruneBatch :execrows
-- Verification and reset codes that expired longer than keep ago, spent or not (the resend
-- interval they hold is far shorter than their validity).
DELETE FROM account_codes WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM account_codes
    WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY expires_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: AccountCodeCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM account_codes WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY expires_at LIMIT @lim::int
) AS due;

-- name: OutboxPruneAppliedBatch :execrows
-- Outbox events their consumer applied, made longer than keep ago: PostgreSQL no longer needs them
-- (the consumer's inbox keeps the event id as long as a redelivery could still arrive). Walks
-- outbox_applied_idx (created_at, id).
DELETE FROM outbox WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM outbox
    WHERE status = 'applied' AND created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY created_at, id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: OutboxCountPrunableApplied :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM outbox
    WHERE status = 'applied' AND created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY created_at, id LIMIT @lim::int
) AS due;

-- name: OutboxPruneDeadBatch :execrows
-- Dead outbox events (out of attempts; `inkwell outbox retry` can still revive them until then),
-- made longer than keep ago. Walks outbox_dead_idx (id, which grows with created_at).
DELETE FROM outbox WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM outbox
    WHERE status = 'dead' AND created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: OutboxCountPrunableDead :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM outbox
    WHERE status = 'dead' AND created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY id LIMIT @lim::int
) AS due;

-- name: UploadPruneUnreferencedBatch :one
-- Uploads nothing refers to whose last reference (or, never referred to, their upload) is older
-- than keep, along uploads_unreferenced_idx; their keys become orphans (the retention pass deletes
-- the objects no upload uses) and their owners' totals move, in the same statement.
WITH gone AS (
    DELETE FROM uploads WHERE ctid = ANY(ARRAY(
        SELECT u.ctid FROM uploads u
        WHERE coalesce(u.referenced_at, u.created_at) < now() - make_interval(secs => @keep_seconds::float8)
          AND NOT EXISTS (SELECT 1 FROM upload_references r WHERE r.upload_id = u.id)
        ORDER BY coalesce(u.referenced_at, u.created_at)
        LIMIT @lim::int
        FOR UPDATE OF u SKIP LOCKED))
    RETURNING user_id, bytes, object_key, variant_keys
), totals AS (
    UPDATE upload_totals t SET bytes = t.bytes - g.bytes
    FROM (SELECT user_id, sum(bytes)::bigint AS bytes FROM gone GROUP BY user_id) g
    WHERE t.user_id = g.user_id
), orphans AS (
    INSERT INTO upload_orphans (object_key)
    SELECT DISTINCT k FROM (SELECT object_key AS k FROM gone UNION ALL SELECT unnest(variant_keys) FROM gone) ks
    ON CONFLICT (object_key) DO UPDATE SET orphaned_at = now()
)
SELECT count(*)::bigint FROM gone;

-- name: UploadCountPrunableUnreferenced :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM uploads u
    WHERE coalesce(u.referenced_at, u.created_at) < now() - make_interval(secs => @keep_seconds::float8)
      AND NOT EXISTS (SELECT 1 FROM upload_references r WHERE r.upload_id = u.id)
    ORDER BY coalesce(u.referenced_at, u.created_at)
    LIMIT @lim::int
) AS due;

-- name: SignInStatePruneBatch :execrows
-- Sign-in states and exchange codes that expired longer than keep ago: never consumed (a sign-in
-- abandoned at the provider, a code the front end never exchanged).
DELETE FROM sign_in_states WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM sign_in_states
    WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY expires_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: SignInStateCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM sign_in_states WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY expires_at LIMIT @lim::int
) AS due;

-- name: SignInCodePruneBatch :execrows
DELETE FROM sign_in_codes WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM sign_in_codes
    WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY expires_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: SignInCodeCountPrunable :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM sign_in_codes WHERE expires_at < now() - make_interval(secs => @keep_seconds::float8) ORDER BY expires_at LIMIT @lim::int
) AS due;

-- name: WebhookDeliveryPruneDoneBatch :execrows
-- Finished webhook deliveries (delivered or dead; never pending ones) made longer than keep ago,
-- oldest first along webhook_deliveries_done_idx; their attempts go with them (ON DELETE CASCADE,
-- at most domain.WebhookRetry.MaxAttempts each).
DELETE FROM webhook_deliveries WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM webhook_deliveries
    WHERE status <> 'pending' AND created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY created_at
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED));

-- name: WebhookDeliveryCountPrunableDone :one
SELECT count(*)::bigint FROM (
    SELECT 1 FROM webhook_deliveries
    WHERE status <> 'pending' AND created_at < now() - make_interval(secs => @keep_seconds::float8)
    ORDER BY created_at
    LIMIT @lim::int
) AS due;
