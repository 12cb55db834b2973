-- name: IdempotencyTryLock :one
-- A transaction-scoped advisory lock on the key, if no other transaction holds it. A second request
-- with the same key does not wait on a connection: it lets the connection go and tries again
-- until the first has finished (then it replays its answer) or its wait is over (409).
SELECT pg_try_advisory_xact_lock(hashtextextended(@scope::text || ':' || @key::text, 0))::bool AS locked;

-- name: IdempotencyGet :one
SELECT * FROM idempotency_keys
WHERE scope = @scope::text AND key = @key::text AND created_at > @not_before::timestamptz;

-- name: IdempotencyPut :exec
-- session_user_id names the account a replay signs in (a registration); no token is stored.
INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body, session_user_id)
VALUES (@scope::text, @key::text, @request_hash::text, @response_status::int, @response_body::bytea,
        sqlc.narg(session_user_id)::bigint)
ON CONFLICT (scope, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
    response_body = EXCLUDED.response_body, session_user_id = EXCLUDED.session_user_id, created_at = now();

-- name: IdempotencyPrune :execrows
DELETE FROM idempotency_keys WHERE created_at < @before::timestamptz;

-- name: SessionInsert :exec
INSERT INTO sessions (id, user_id) VALUES (@id::text, @user_id::bigint);

-- name: SessionRevoke :one
-- Stamps the revocation with the time of the statement (clock_timestamp, not the start of the
-- transaction): the revocation-lease renewal finds recent revocations by revoked_at, so it should be
-- close to the commit even in a long unit of work.
UPDATE sessions SET revoked_at = COALESCE(revoked_at, clock_timestamp()) WHERE id = @id::text RETURNING user_id;

-- name: SessionIsRevoked :one
SELECT (revoked_at IS NOT NULL)::boolean FROM sessions WHERE id = @id::text;

-- name: RefreshTokenInsert :exec
INSERT INTO refresh_tokens (token_hash, session_id, expires_at)
VALUES (@token_hash::bytea, @session_id::text, @expires_at::timestamptz);

-- name: RefreshTokenGetForUpdate :one
-- Locks the token row so two concurrent uses of one token are decided one after the other.
SELECT r.token_hash, r.session_id, r.expires_at, r.spent_at, s.user_id, s.revoked_at
FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
WHERE r.token_hash = @token_hash::bytea
FOR UPDATE OF r;

-- name: RefreshTokenSpend :exec
UPDATE refresh_tokens SET spent_at = now() WHERE token_hash = @token_hash::bytea;

-- name: APIKeyInsert :one
INSERT INTO api_keys (user_id, name, prefix, key_hash)
VALUES (@user_id::bigint, @name::text, @prefix::text, @key_hash::bytea)
RETURNING *;

-- name: APIKeyListByUser :many
SELECT * FROM api_keys WHERE user_id = @user_id::bigint AND revoked_at IS NULL ORDER BY created_at DESC, id DESC;

-- name: APIKeyRevoke :execrows
UPDATE api_keys SET revoked_at = now() WHERE id = @id::bigint AND user_id = @user_id::bigint AND revoked_at IS NULL;

-- name: APIKeyAuthenticate :one
-- Finds a live key by hash and notes its use, at most once a minute so busy keys cost no write per request.
WITH k AS (
    SELECT id, user_id FROM api_keys WHERE key_hash = @key_hash::bytea AND revoked_at IS NULL
), touched AS (
    UPDATE api_keys a SET last_used_at = now()
    FROM k WHERE a.id = k.id AND (a.last_used_at IS NULL OR a.last_used_at < now() - interval '1 minute')
)
SELECT k.user_id FROM k;

-- name: SessionRevokedWithin :many
-- The sessions revoked in the last within_seconds by the clock of the database (no instance clock
-- is involved), to copy into the revocation cache (sessions_revoked_idx).
SELECT id FROM sessions WHERE revoked_at >= now() - make_interval(secs => @within_seconds::float8) ORDER BY revoked_at;
