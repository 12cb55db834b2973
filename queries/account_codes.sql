-- name: AccountCodeIssue :one
-- Stores a new code for the account and purpose unless the previous one was sent less than
-- resend_seconds ago (then no row comes back). Attempts and spending start again.
INSERT INTO account_codes (user_id, purpose, email, code_hash, sent_at, expires_at)
VALUES (@user_id::bigint, @purpose::text, @email::text, @code_hash::bytea, now(),
        now() + make_interval(secs => @valid_seconds::float8))
ON CONFLICT (user_id, purpose) DO UPDATE
SET email      = EXCLUDED.email,
    code_hash  = EXCLUDED.code_hash,
    sent_at    = EXCLUDED.sent_at,
    expires_at = EXCLUDED.expires_at,
    attempts   = 0,
    spent_at   = NULL
WHERE account_codes.sent_at <= now() - make_interval(secs => @resend_seconds::float8)
RETURNING user_id;

-- name: AccountCodeGetForUpdate :one
-- The account's code for purpose, locked, with whether it is still usable by the database's clock.
SELECT c.email, c.code_hash, c.attempts, (c.spent_at IS NULL AND c.expires_at > now())::boolean AS live
FROM account_codes c
WHERE c.user_id = @user_id::bigint AND c.purpose = @purpose::text
FOR UPDATE;

-- name: AccountCodeCountAttempt :exec
-- Counts a wrong guess from any client: the code's total, for an operator. The limit on guesses
-- is per client (account_code_misses).
UPDATE account_codes SET attempts = attempts + 1
WHERE user_id = @user_id::bigint AND purpose = @purpose::text;

-- name: AccountCodeMisses :one
-- The wrong guesses one client made at the account's code for purpose.
SELECT misses FROM account_code_misses
WHERE user_id = @user_id::bigint AND purpose = @purpose::text AND client = @client::text;

-- name: AccountCodeCountMiss :exec
INSERT INTO account_code_misses (user_id, purpose, client, misses)
VALUES (@user_id::bigint, @purpose::text, @client::text, 1)
ON CONFLICT (user_id, purpose, client) DO UPDATE SET misses = account_code_misses.misses + 1;

-- name: AccountCodeMissesReset :exec
-- A new code: every client may guess again.
DELETE FROM account_code_misses WHERE user_id = @user_id::bigint AND purpose = @purpose::text;

-- name: AccountCodeSpend :exec
UPDATE account_codes SET spent_at = now()
WHERE user_id = @user_id::bigint AND purpose = @purpose::text;

-- name: UserMarkEmailVerified :execrows
-- Marks the email verified if it is still the address the code went to.
UPDATE users SET email_verified_at = now(), updated_at = now()
WHERE id = @id::bigint AND email = @email::text AND email_verified_at IS NULL;

-- name: UserReplaceCredentials :exec
-- A proof of the email's ownership (reset code, code login) sets a new password hash and marks
-- the email verified.
UPDATE users
SET password_hash     = @password_hash::text,
    email_verified_at = COALESCE(email_verified_at, now()),
    updated_at        = now()
WHERE id = @id::bigint;

-- name: SessionRevokeAllOfUser :many
-- Ends every live session of the user, returning their ids for the revocation cache.
UPDATE sessions SET revoked_at = clock_timestamp()
WHERE user_id = @user_id::bigint AND revoked_at IS NULL
RETURNING id;

-- name: APIKeyRevokeAllOfUser :exec
UPDATE api_keys SET revoked_at = now()
WHERE user_id = @user_id::bigint AND revoked_at IS NULL;
