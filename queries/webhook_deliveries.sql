-- name: WebhookDeliveryInsert :one
-- Idempotent per (endpoint, event): a re-delivered outbox entry adds nothing.
INSERT INTO webhook_deliveries (webhook_id, seq, event_id, event_type, body)
VALUES (@webhook_id::bigint, @seq::bigint, @event_id::text, @event_type::text, @body::text)
ON CONFLICT (webhook_id, event_id) DO NOTHING
RETURNING id;

-- name: WebhookDeliveryHead :one
-- The endpoint's lowest pending delivery: the one whose job may run.
SELECT id FROM webhook_deliveries
WHERE webhook_id = @webhook_id::bigint AND status = 'pending'
ORDER BY seq
LIMIT 1;

-- name: WebhookDeliveryGet :one
SELECT * FROM webhook_deliveries WHERE id = @id::bigint;

-- name: WebhookDeliveryRecord :one
-- Records one attempt's outcome, on the delivery (its last attempt) and as a row of its own in
-- webhook_attempts (numbered by the delivery's count), in one statement; the status moves from
-- pending only.
WITH d AS (
    UPDATE webhook_deliveries
    SET attempts = attempts + 1, status = CASE WHEN status = 'pending' THEN @status::text ELSE status END,
        status_code = sqlc.narg(status_code)::int, latency_ms = @latency_ms::int, response = @response::text,
        error = @error::text, attempted_at = now()
    WHERE id = @id::bigint
    RETURNING id, attempts, status, status_code, latency_ms, response, error
), attempt AS (
    INSERT INTO webhook_attempts (delivery_id, attempt, status_code, latency_ms, response, error)
    SELECT id, attempts, status_code, latency_ms, response, error FROM d
)
SELECT status FROM d;

-- name: WebhookDeliveryRecordSuccess :one
-- A 2xx attempt, recorded and the endpoint's next delivery enqueued in one autocommitted call
-- (migration 00039 says why and how it keeps the unit of work's order); '' when the delivery or
-- its endpoint is gone.
SELECT COALESCE(webhook_record_success(@id::bigint, @webhook_id::bigint, @status_code::int, @latency_ms::int,
    @response::text, @max_attempts::int, @traceparent::text), '')::text AS status;

-- name: WebhookDeliveryKill :exec
-- A pending delivery of an endpoint that was disabled or deleted ends dead, unattempted.
UPDATE webhook_deliveries SET status = 'dead', error = @error::text WHERE id = @id::bigint AND status = 'pending';

-- name: WebhookDeliveryList :many
-- One page of an endpoint's deliveries, newest first, keyset on seq (webhook_deliveries_seq_key).
SELECT * FROM webhook_deliveries
WHERE webhook_id = @webhook_id::bigint AND seq < @before_seq::bigint
ORDER BY seq DESC
LIMIT @lim::int;

-- name: WebhookDeliveryForAttempt :one
-- A delivery with its endpoint, for one attempt (one round trip).
SELECT sqlc.embed(d), w.url, w.active, w.secret_enc
FROM webhook_deliveries d
JOIN webhooks w ON w.id = d.webhook_id
WHERE d.id = @id::bigint;

-- name: WebhookAttemptsOf :many
-- The attempts of one page's deliveries, in one statement along webhook_attempts' primary key:
-- each delivery's newest first. A delivery has at most domain.WebhookRetry.MaxAttempts (its job's
-- bound), so the page costs its size; lim (that bound times the deliveries) caps the statement.
SELECT * FROM webhook_attempts
WHERE delivery_id = ANY (@ids::bigint[])
ORDER BY delivery_id DESC, attempt DESC
LIMIT @lim::int;
