-- name: SignInStateInsert :exec
INSERT INTO sign_in_states (state_hash, cookie_hash, provider, redirect, link_user_id, created_at, expires_at)
VALUES (@state_hash::bytea, @cookie_hash::bytea, @provider::text, @redirect::text, sqlc.narg(link_user_id)::bigint,
        @created_at::timestamptz, @expires_at::timestamptz);

-- name: SignInStateTake :one
-- Consumes a state: single use on every instance (the DELETE of the one that wins), only with its
-- browser's cookie, only before it expires. A wrong cookie leaves the state alone.
DELETE FROM sign_in_states
WHERE state_hash = @state_hash::bytea AND cookie_hash = @cookie_hash::bytea AND expires_at > @now::timestamptz
RETURNING *;
