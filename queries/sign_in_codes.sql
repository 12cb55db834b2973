-- name: SignInCodeInsert :exec
INSERT INTO sign_in_codes (code_hash, user_id, created_at, expires_at)
VALUES (@code_hash::bytea, @user_id::bigint, @created_at::timestamptz, @expires_at::timestamptz);

-- name: SignInCodeTake :one
-- Consumes an exchange code: single use fleet-wide, only before it expires.
DELETE FROM sign_in_codes WHERE code_hash = @code_hash::bytea AND expires_at > @now::timestamptz
RETURNING user_id;
