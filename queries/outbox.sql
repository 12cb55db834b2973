-- name: OutboxInsert :one
-- The payload gets the event's time ("at") from PostgreSQL's clock, one clock for every instance,
-- so consumers that apply events in parallel can still order what they produce by it.
INSERT INTO outbox (topic, aggregate_id, payload)
VALUES (@topic::text, @aggregate_id::bigint, @payload::jsonb || jsonb_build_object('at', clock_timestamp()))
RETURNING id;

-- name: OutboxNotify :exec
-- Wakes relays listening on the channel; delivered only if the transaction commits.
SELECT pg_notify('inkwell_outbox', '')::text;

-- name: OutboxClaim :many
-- Claims unpublished events whose lease is free or expired, fenced by a generation bump.
WITH picked AS (
    SELECT id FROM outbox
    WHERE published_at IS NULL AND (lease_until IS NULL OR lease_until < @now::timestamptz)
    ORDER BY id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED
)
UPDATE outbox o
SET lease_owner = @owner::text, lease_until = @lease_until::timestamptz, lease_generation = o.lease_generation + 1
FROM picked
WHERE o.id = picked.id
RETURNING o.*;

-- name: OutboxMarkPublished :execrows
UPDATE outbox
SET published_at = @now::timestamptz, lease_owner = NULL, lease_until = NULL
WHERE id = @id::bigint AND lease_generation = @generation::bigint AND published_at IS NULL;

-- name: OutboxBacklog :one
SELECT count(*)::bigint FROM outbox WHERE published_at IS NULL;
