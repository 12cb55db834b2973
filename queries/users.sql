-- name: UserInsert :one
INSERT INTO users (email, email_canonical, username, password_hash, bio, image)
VALUES (@email::text, @email_canonical::text, @username::text, @password_hash::text, @bio::text, @image::text)
RETURNING *;

-- name: UserGetByID :one
SELECT * FROM users WHERE id = @id::bigint;

-- name: UserGetByEmail :one
-- Emails are compared in their canonical form (domain.CanonicalEmail).
SELECT * FROM users WHERE email_canonical = @email_canonical::text;

-- name: UserGetByUsername :one
SELECT * FROM users WHERE lower(username) = lower(@username::text);

-- name: UserGetByIDForUpdate :one
SELECT * FROM users WHERE id = @id::bigint FOR UPDATE;

-- name: UserUpdate :one
UPDATE users
-- a new address (not a new spelling of the same one) is unverified
SET email_verified_at = CASE WHEN email_canonical = @email_canonical::text THEN email_verified_at END,
    email           = @email::text,
    email_canonical = @email_canonical::text,
    username        = @username::text,
    password_hash   = @password_hash::text,
    bio             = @bio::text,
    image           = @image::text,
    updated_at      = now()
WHERE id = @id::bigint
RETURNING *;

-- name: UserUpdatePasswordHash :exec
UPDATE users
SET password_hash = @password_hash::text
WHERE id = @id::bigint AND password_hash = @old_password_hash::text;

-- name: UserGetByIDs :many
SELECT * FROM users WHERE id = ANY (@ids::bigint[]);

-- name: UserGetByPhone :one
SELECT * FROM users WHERE phone = @phone::text;

-- name: UserInsertWithPhone :one
INSERT INTO users (email, email_canonical, username, password_hash, phone)
VALUES (@email::text, @email_canonical::text, @username::text, @password_hash::text, sqlc.narg(phone)::text)
RETURNING *;

-- name: UserLockIfPassword :one
-- Holds the user's row (shared) only while its password hash is still the one a login verified:
-- a password change, reset or takeover (which update the row, and end the sessions, in their own
-- transaction) either commits first and this finds no row, or waits for the login's session.
SELECT id FROM users WHERE id = @id::bigint AND password_hash = @password_hash::text FOR SHARE;
