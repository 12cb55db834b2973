-- name: JobEnqueue :one
-- With a unique_key, enqueueing the same job twice inserts nothing and returns no row. Without an
-- available_at the job is due by the database's clock, the one claims compare with. An empty
-- traceparent (tracing off) is stored as NULL.
INSERT INTO jobs (queue, kind, payload, priority, available_at, max_attempts, unique_key, delete_when_done, traceparent)
VALUES (@queue::text, @kind::text, @payload::jsonb, @priority::int, COALESCE(sqlc.narg(available_at)::timestamptz, now()),
        @max_attempts::int, sqlc.narg(unique_key)::text, @delete_when_done::boolean, NULLIF(@traceparent::text, ''))
ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
RETURNING id;

-- name: JobAckAndClaim :many
-- One worker cycle in one statement (one round trip, one commit): acknowledge the jobs it
-- finished, fenced by their claim's generation, and claim up to lim more. SKIP LOCKED lets
-- concurrent workers claim disjoint sets without waiting on each other; each claim bumps the
-- generation that fences the holder's later writes. Every row carries the ids whose ack took (a
-- lost lease matches no row); when nothing was claimed, one row comes back with NULL job columns.
-- A done job marked delete_when_done is deleted instead (its payload must not stay at rest).
-- Every instant is the database's (now()): leases are stamped and compared by one clock however
-- far the instances' clocks drift; the lease itself is a duration.
WITH kept AS (
    UPDATE jobs j
    SET status = 'done', finished_at = now(), updated_at = now(),
        lease_owner = NULL, lease_until = NULL, last_error = NULL
    FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@generations::bigint[]) AS generation) AS held
    WHERE j.id = ANY(@ids::bigint[]) AND j.id = held.id AND j.lease_generation = held.generation AND j.lease_owner IS NOT NULL
      AND NOT j.delete_when_done
    RETURNING j.id
), deleted AS (
    DELETE FROM jobs j
    USING (SELECT unnest(@ids::bigint[]) AS id, unnest(@generations::bigint[]) AS generation) AS held
    WHERE j.id = ANY(@ids::bigint[]) AND j.id = held.id AND j.lease_generation = held.generation AND j.lease_owner IS NOT NULL
      AND j.delete_when_done
    RETURNING j.id
), acked AS (
    SELECT id FROM kept UNION ALL SELECT id FROM deleted
), picked AS (
    SELECT id FROM jobs
    WHERE queue = @queue::text AND status = 'ready' AND available_at <= now()
    ORDER BY priority DESC, available_at, id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE jobs j
    SET status = 'running', lease_owner = @owner::text, lease_until = now() + make_interval(secs => @lease_secs::float8),
        lease_generation = j.lease_generation + 1, attempts = j.attempts + 1, updated_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.*
)
SELECT (SELECT coalesce(array_agg(id), '{}') FROM acked)::bigint[] AS acked_ids, claimed.*
FROM (SELECT 1) AS always_one_row
LEFT JOIN claimed ON true;

-- name: JobFail :execrows
-- Retries later, or buries the job when it is out of attempts or the failure is permanent.
-- Like the ack and the renewal, it is fenced by the claim's generation and a held lease
-- (lease_owner IS NOT NULL, which is status = 'running': see migration 00007). The retry is due
-- retry_after_secs from now by the database's clock.
UPDATE jobs
SET status       = CASE WHEN @permanent::boolean OR attempts >= max_attempts THEN 'dead' ELSE 'ready' END,
    available_at = now() + make_interval(secs => @retry_after_secs::float8),
    last_error   = @last_error::text,
    lease_owner  = NULL,
    lease_until  = NULL,
    updated_at   = now(),
    finished_at  = CASE WHEN @permanent::boolean OR attempts >= max_attempts THEN now() END
WHERE id = @id::bigint AND lease_generation = @generation::bigint AND lease_owner IS NOT NULL;

-- name: JobRenew :execrows
-- Extends the lease to lease_secs from now by the database's clock.
UPDATE jobs
SET lease_until = now() + make_interval(secs => @lease_secs::float8), updated_at = now()
WHERE id = @id::bigint AND lease_generation = @generation::bigint AND lease_owner IS NOT NULL;

-- name: JobReap :many
-- Returns at most lim jobs whose lease ran out (their worker died) to the ready set, or buries
-- them when that attempt was their last. Batched, oldest lease first, skipping rows another
-- reaper holds: after an outage with many expired leases no statement locks them all at once.
-- Expired by the database's clock, the one that stamped the leases.
WITH expired AS (
    SELECT id FROM jobs
    WHERE status = 'running' AND lease_until < now()
    ORDER BY lease_until
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs j
SET status      = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'ready' END,
    lease_owner = NULL,
    lease_until = NULL,
    last_error  = 'lease expired: the worker stopped without finishing',
    updated_at  = now(),
    finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END
FROM expired
WHERE j.id = expired.id
RETURNING j.id, j.status;

-- name: JobList :many
-- Operator listing: dead jobs first, then the rest, newest first.
SELECT * FROM jobs
WHERE (sqlc.narg(queue)::text IS NULL OR queue = sqlc.narg(queue)::text)
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status)::text)
ORDER BY (status = 'dead') DESC, updated_at DESC, id DESC
LIMIT @lim::int;

-- name: JobRetry :execrows
UPDATE jobs
SET status = 'ready', attempts = 0, available_at = now(), last_error = NULL, finished_at = NULL, updated_at = now()
WHERE id = @id::bigint AND status = 'dead';

-- name: JobDiscard :execrows
DELETE FROM jobs WHERE id = @id::bigint AND status IN ('dead', 'done');

-- name: JobGet :one
SELECT * FROM jobs WHERE id = @id::bigint;

-- name: JobStats :many
SELECT queue, status, count(*)::bigint AS jobs, COALESCE(min(available_at), now())::timestamptz AS oldest_available
FROM jobs
GROUP BY queue, status;

-- name: JobNotify :one
-- Wakes workers listening for a queue; delivered only if the transaction commits. The payload is
-- the queue's name, followed for a job due later by a tab and its due time (durable.NotifyPayload).
SELECT pg_notify('inkwell_jobs', @payload::text)::text;
