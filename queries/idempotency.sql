-- name: IdempotencyTryLock :one
-- A transaction-scoped advisory lock on the key, if no other transaction holds it. A second request
-- with the same key does not wait on a connection: it lets the connection go and tries again
-- until the first has finished (then it replays its answer) or its wait is over (409).
SELECT pg_try_advisory_xact_lock(hashtextextended(@scope::text || ':' || @key::text, 0))::bool AS locked;

-- name: IdempotencyGet :one
-- A key younger than max_age_secs by the database's clock, the one that stamped created_at.
SELECT * FROM idempotency_keys
WHERE scope = @scope::text AND key = @key::text AND created_at > now() - make_interval(secs => @max_age_secs::float8);

-- name: IdempotencyPut :exec
-- session_user_id names the account a replay signs in (a registration); no token is stored.
INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body, session_user_id)
VALUES (@scope::text, @key::text, @request_hash::text, @response_status::int, @response_body::bytea,
        sqlc.narg(session_user_id)::bigint)
ON CONFLICT (scope, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
    response_body = EXCLUDED.response_body, session_user_id = EXCLUDED.session_user_id, created_at = now();
