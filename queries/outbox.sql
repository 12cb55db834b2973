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
-- Claims pending events that are due and whose lease is free or expired, fenced by a generation
-- bump. Leases are stamped and compared with PostgreSQL's clock, one clock for every relay.
WITH picked AS (
    SELECT id FROM outbox
    WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
    ORDER BY id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED
)
UPDATE outbox o
SET lease_owner = @owner::text, lease_until = now() + make_interval(secs => @lease_seconds::float8),
    lease_generation = o.lease_generation + 1
FROM picked
WHERE o.id = picked.id
RETURNING o.*;

-- name: OutboxMarkPublished :execrows
-- A row the consumer applied while this relay still held it (a re-drive raced the consumer's
-- commit) stays applied: the status only moves forward from pending.
UPDATE outbox
SET status = 'published', published_at = now(), lease_owner = NULL, lease_until = NULL
WHERE id = @id::bigint AND lease_generation = @generation::bigint AND status = 'pending';

-- name: OutboxRedrive :many
-- Makes events published longer ago than the redelivery window and still not applied claimable
-- again (their stream entry was lost, dead-lettered, or never applied), each re-drive one
-- attempt: due again after an exponential backoff (base · 2^(attempts-1), capped), or dead once
-- the attempts are spent. One batch, oldest first, SKIP LOCKED: relays on several instances share
-- the work and never re-drive a row twice at once.
WITH picked AS (
    SELECT id FROM outbox
    WHERE status = 'published' AND published_at < now() - make_interval(secs => @window_seconds::float8)
    ORDER BY published_at, id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED
)
UPDATE outbox o
SET attempts = o.attempts + 1,
    status = CASE WHEN o.attempts + 1 >= @max_attempts::int THEN 'dead' ELSE 'pending' END,
    next_attempt_at = now() + least(
        make_interval(secs => @backoff_base_seconds::float8) * power(2, least(o.attempts, 30)),
        make_interval(secs => @backoff_max_seconds::float8)),
    last_error = 'not applied within ' || @window_seconds::float8 || 's of publishing (attempt ' || (o.attempts + 1) || ')',
    published_at = NULL
FROM picked
WHERE o.id = picked.id
RETURNING o.id, o.status, o.attempts;

-- name: OutboxMarkApplied :execrows
-- Run by the consumer in the transaction that applies the event. Whatever the row's status (a
-- re-drive may have made it pending or dead meanwhile), the event is applied: nothing re-drives
-- it again.
UPDATE outbox
SET status = 'applied', applied_at = COALESCE(applied_at, now()), lease_owner = NULL, lease_until = NULL
WHERE id = @id::bigint AND status <> 'applied';

-- name: OutboxBacklog :one
SELECT count(*)::bigint FROM outbox WHERE status = 'pending';

-- name: OutboxHealth :one
-- The dead rows, and the age on PostgreSQL's clock of the oldest event not yet applied (the first
-- pending row by id, or the oldest published one; 0 when there is none). Each part walks its own
-- partial index; the published rows are those of one redelivery window.
SELECT
    (SELECT count(*) FROM outbox WHERE status = 'dead')::bigint AS dead,
    EXTRACT(EPOCH FROM now() - COALESCE(LEAST(
        (SELECT p.created_at FROM outbox p WHERE p.status = 'pending' ORDER BY p.id LIMIT 1),
        (SELECT min(u.created_at) FROM outbox u WHERE u.status = 'published')
    ), now()))::float8 AS oldest_unapplied_seconds;

-- name: OutboxList :many
-- One page for the operator, newest first, optionally of one status.
SELECT id, topic, aggregate_id, status, attempts, created_at, published_at, applied_at, next_attempt_at, last_error
FROM outbox
WHERE (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status)::text)
ORDER BY id DESC
LIMIT @lim::int;

-- name: OutboxRetry :execrows
-- A dead event becomes pending again with a fresh set of attempts.
UPDATE outbox
SET status = 'pending', attempts = 0, next_attempt_at = now(), published_at = NULL,
    lease_owner = NULL, lease_until = NULL, last_error = NULL
WHERE id = @id::bigint AND status = 'dead';

-- name: OutboxDiscard :execrows
-- An operator gives up on a dead event.
DELETE FROM outbox WHERE id = @id::bigint AND status = 'dead';

-- name: OutboxRelease :execrows
-- Gives back the leases of events a relay could not write to the stream (Redis failing), so the
-- next pass of any relay retries them at once instead of after the lease; the error is kept for
-- the operator. Not an attempt: the event is not at fault.
UPDATE outbox o
SET lease_owner = NULL, lease_until = NULL, last_error = @last_error::text
FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@generations::bigint[]) AS generation) AS held
WHERE o.id = held.id AND o.lease_generation = held.generation AND o.status = 'pending';
