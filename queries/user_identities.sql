-- name: UserIdentityGetBySubject :one
-- Who signs in: the unique (provider, subject).
SELECT * FROM user_identities WHERE provider = @provider::text AND subject = @subject::text;

-- name: UserIdentityInsert :one
-- Links an identity to an account; a (provider, subject) another account holds violates
-- user_identities_provider_subject_key (domain.ErrIdentityInUse).
INSERT INTO user_identities (user_id, provider, subject, email)
VALUES (@user_id::bigint, @provider::text, @subject::text, @email::text)
RETURNING *;

-- name: UserIdentityTouch :exec
UPDATE user_identities SET last_used_at = @now::timestamptz WHERE id = @id::bigint;

-- name: UserIdentityListByUser :many
-- An account has a handful of identities (one per configured provider at most in practice);
-- the list is bounded by the number of providers, read off user_identities_user_idx.
SELECT * FROM user_identities WHERE user_id = @user_id::bigint ORDER BY id LIMIT 100;

-- name: UserIdentityCountByUser :one
SELECT count(*)::bigint FROM user_identities WHERE user_id = @user_id::bigint;

-- name: UserIdentityDelete :execrows
DELETE FROM user_identities WHERE id = @id::bigint AND user_id = @user_id::bigint;

-- name: UserIdentityMarkEmailVerified :exec
-- A new account whose provider verified its email: verified from the start (users' own column,
-- written in the account's unit of work).
UPDATE users SET email_verified_at = @now::timestamptz WHERE id = @user_id::bigint AND email_verified_at IS NULL;
