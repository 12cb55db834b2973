-- name: WebhookLockOwner :exec
-- Serializes the creates of one owner (0: the site), so the per-owner cap holds under concurrency.
SELECT pg_advisory_xact_lock(hashtext('inkwell_webhooks'), hashtext(@owner_key::text));

-- name: WebhookCountByOwner :one
SELECT count(*)::bigint FROM webhooks WHERE owner_id IS NOT DISTINCT FROM sqlc.narg(owner_id)::bigint;

-- name: WebhookInsert :one
INSERT INTO webhooks (owner_id, url, events, secret_enc)
VALUES (sqlc.narg(owner_id)::bigint, @url::text, @events::text[], @secret_enc::bytea)
RETURNING *;

-- name: WebhookGet :one
SELECT * FROM webhooks WHERE id = @id::bigint;

-- name: WebhookListByOwner :many
-- An owner's endpoints (at most the cap), oldest first; owner NULL: the site's.
SELECT * FROM webhooks WHERE owner_id IS NOT DISTINCT FROM sqlc.narg(owner_id)::bigint ORDER BY id;

-- name: WebhookUpdate :one
-- Turning an endpoint back on forgets its failures.
UPDATE webhooks
SET url = @url::text, events = @events::text[], active = @active::boolean,
    failing_since = CASE WHEN @active::boolean AND NOT active THEN NULL ELSE failing_since END,
    updated_at = now()
WHERE id = @id::bigint
RETURNING *;

-- name: WebhookDelete :execrows
DELETE FROM webhooks WHERE id = @id::bigint;


-- name: WebhookNextSeq :one
-- Numbers an endpoint's next delivery under its row lock, so deliveries are numbered (and their
-- jobs enqueued) in one order per endpoint.
UPDATE webhooks SET next_seq = next_seq + 1 WHERE id = @id::bigint RETURNING next_seq, active;

-- name: WebhookLock :one
SELECT * FROM webhooks WHERE id = @id::bigint FOR UPDATE;

-- name: WebhookSucceeded :exec
UPDATE webhooks SET failing_since = NULL WHERE id = @id::bigint AND failing_since IS NOT NULL;

-- name: WebhookFailed :one
-- Records a failed attempt at @now (the service's clock); returns since when the endpoint fails.
UPDATE webhooks SET failing_since = COALESCE(failing_since, @now::timestamptz)
WHERE id = @id::bigint
RETURNING failing_since::timestamptz;

-- name: WebhookDisable :one
UPDATE webhooks SET active = false, updated_at = now() WHERE id = @id::bigint RETURNING owner_id;

-- name: WebhookNotifyDisabled :exec
-- The owner's notice that an endpoint was disabled (once per endpoint and disabling).
INSERT INTO notifications (user_id, kind, event_id, detail)
VALUES (@user_id::bigint, 'webhook.disabled', @event_id::text, @detail::text)
ON CONFLICT (user_id, event_id) DO NOTHING;
