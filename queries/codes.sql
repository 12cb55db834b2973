-- name: LoginCodeLockTarget :exec
-- Serializes the code steps of one target for the rest of the transaction (the code row may not
-- exist yet, so a row lock would not do).
SELECT pg_advisory_xact_lock(hashtextextended(@lock_key::text, 0));

-- name: LoginCodeMeterGet :one
-- A meter's count in its current window; no row once the window has passed.
SELECT hits, window_ends FROM login_code_meters WHERE key = @key::text AND window_ends > @now::timestamptz;

-- name: LoginCodeMeterHit :one
-- Counts one hit, starting a new window when the last one has passed.
INSERT INTO login_code_meters (key, hits, window_ends)
VALUES (@key::text, 1, @new_window_ends::timestamptz)
ON CONFLICT (key) DO UPDATE
SET hits        = CASE WHEN login_code_meters.window_ends <= @now::timestamptz THEN 1 ELSE login_code_meters.hits + 1 END,
    window_ends = CASE WHEN login_code_meters.window_ends <= @now::timestamptz
                       THEN EXCLUDED.window_ends ELSE login_code_meters.window_ends END
RETURNING hits, window_ends;

-- name: LoginCodeMeterGiveBack :exec
UPDATE login_code_meters SET hits = hits - 1 WHERE key = @key::text AND hits > 0;

-- name: LoginCodeGet :one
SELECT * FROM login_codes WHERE target = @target::text AND expires_at > @now::timestamptz;

-- name: LoginCodePut :exec
INSERT INTO login_codes (target, code_hash, attempts_left, spent, sent_at, expires_at, strong)
VALUES (@target::text, @code_hash::text, @attempts_left::int, false, @now::timestamptz, @expires_at::timestamptz, @strong::boolean)
ON CONFLICT (target) DO UPDATE
SET code_hash = EXCLUDED.code_hash, attempts_left = EXCLUDED.attempts_left, spent = false,
    sent_at = EXCLUDED.sent_at, expires_at = EXCLUDED.expires_at, strong = EXCLUDED.strong;

-- name: LoginCodeSpend :exec
UPDATE login_codes SET spent = true WHERE target = @target::text;

-- name: LoginCodeMiss :exec
UPDATE login_codes SET attempts_left = attempts_left - 1 WHERE target = @target::text;

-- name: LoginCodeWithdraw :execrows
DELETE FROM login_codes WHERE target = @target::text AND code_hash = @code_hash::text;

-- name: LoginCodePurgeExpired :exec
-- Drops codes and meters whose time has passed (run by each send: the table stays small).
WITH codes AS (
    DELETE FROM login_codes WHERE login_codes.expires_at <= @now::timestamptz RETURNING 1
), meters AS (
    DELETE FROM login_code_meters WHERE login_code_meters.window_ends <= @now::timestamptz RETURNING 1
)
SELECT (SELECT count(*) FROM codes) + (SELECT count(*) FROM meters) AS purged;
