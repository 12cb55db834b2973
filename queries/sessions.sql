-- name: SessionInsert :exec
INSERT INTO sessions (id, user_id, user_agent) VALUES (@id::text, @user_id::bigint, @user_agent::text);

-- name: SessionRevokeBeyond :many
-- Ends the user's unrevoked sessions beyond the @keep most recently used (a refresh is a use),
-- returning their ids so each gets its revocation mark. It runs after each start, so the user's
-- unrevoked sessions, which it reads (sessions_user_live_idx) and sorts, are at most @keep + 1
-- (an expired session that was never revoked is among the least recently used: it goes first).
UPDATE sessions SET revoked_at = clock_timestamp()
WHERE id IN (
    SELECT s.id FROM sessions s
    WHERE s.user_id = @user_id::bigint AND s.revoked_at IS NULL
    ORDER BY COALESCE(s.last_used_at, s.created_at) DESC, s.id
    OFFSET @keep::int
) AND revoked_at IS NULL
RETURNING id;

-- name: SessionTouch :exec
-- Notes a refresh as the session's last use: the only write that tracks use, so plain requests
-- cost none.
UPDATE sessions SET last_used_at = now() WHERE id = @id::text;

-- name: SessionListLiveByUser :many
-- The user's sessions that can still be refreshed: not revoked, with an unspent refresh token
-- that has not expired.
SELECT s.id, s.user_agent, s.created_at, s.last_used_at
FROM sessions s
WHERE s.user_id = @user_id::bigint AND s.revoked_at IS NULL
  AND EXISTS (SELECT 1 FROM refresh_tokens r
              WHERE r.session_id = s.id AND r.spent_at IS NULL AND r.expires_at > now())
ORDER BY COALESCE(s.last_used_at, s.created_at) DESC, s.id;

-- name: SessionRevokeOwned :execrows
-- Revokes one of the user's live sessions; 0 rows: not the user's, unknown or already revoked.
UPDATE sessions SET revoked_at = clock_timestamp()
WHERE id = @id::text AND user_id = @user_id::bigint AND revoked_at IS NULL;

-- name: SessionRevokeAllByUser :many
-- Revokes every live session of the user except keep ('' keeps none), returning their ids so
-- each gets its revocation mark.
UPDATE sessions SET revoked_at = clock_timestamp()
WHERE user_id = @user_id::bigint AND revoked_at IS NULL AND id <> @keep::text
RETURNING id;

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

-- name: APIKeyCountLive :one
SELECT count(*)::int FROM api_keys WHERE user_id = @user_id::bigint AND revoked_at IS NULL;

-- name: APIKeyInsert :one
INSERT INTO api_keys (user_id, name, prefix, key_hash, scopes)
VALUES (@user_id::bigint, @name::text, @prefix::text, @key_hash::bytea, @scopes::text[])
RETURNING *;

-- name: APIKeyRevokeAllByUser :execrows
UPDATE api_keys SET revoked_at = now() WHERE user_id = @user_id::bigint AND revoked_at IS NULL;

-- name: APIKeyListByUser :many
SELECT * FROM api_keys WHERE user_id = @user_id::bigint AND revoked_at IS NULL ORDER BY created_at DESC, id DESC;

-- name: APIKeyRevoke :execrows
UPDATE api_keys SET revoked_at = now() WHERE id = @id::bigint AND user_id = @user_id::bigint AND revoked_at IS NULL;

-- name: APIKeyAuthenticate :one
-- Finds a live key by hash and notes its use, at most once a minute so busy keys cost no write per request.
WITH k AS (
    SELECT id, user_id, scopes FROM api_keys WHERE key_hash = @key_hash::bytea AND revoked_at IS NULL
), touched AS (
    UPDATE api_keys a SET last_used_at = now()
    FROM k WHERE a.id = k.id AND (a.last_used_at IS NULL OR a.last_used_at < now() - interval '1 minute')
)
SELECT k.id, k.user_id, k.scopes FROM k;

-- name: SessionRevokedWithin :many
-- The sessions revoked in the last within_seconds by the clock of the database (no instance clock
-- is involved), to copy into the revocation cache (sessions_revoked_idx).
SELECT id FROM sessions WHERE revoked_at >= now() - make_interval(secs => @within_seconds::float8) ORDER BY revoked_at;
