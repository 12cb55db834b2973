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

-- name: UserSearch :many
-- People search, ranked in groups: the exact username, then usernames starting with @q (the first
-- @lim in byte order, a range of users_username_prefix_idx), then the usernames most similar to @q
-- (trigram similarity ≥ pg_trgm.similarity_threshold, off the trigram GIN), then users whose bio
-- holds the words of @q (the bio GIN). Each group reads a bounded number of rows; a user in several
-- groups counts in the best. The similar and bio groups are skipped when the prefix group fills
-- the page (they would rank below it). @q is lower-cased and @prefix LIKE-escaped by the caller.
WITH prefix AS (
    SELECT u.id, lower(u.username) AS name
    FROM users u WHERE (lower(u.username) COLLATE "C") LIKE @prefix::text
    ORDER BY (lower(u.username) COLLATE "C") LIMIT @lim::int
), fill AS (
    SELECT count(*) < @lim::int AS more FROM prefix
)
SELECT m.id, m.grp::int AS grp
FROM (
    SELECT g.id, min(g.grp) AS grp, min(g.dist) AS dist, min(g.name) AS name
    FROM (
        (SELECT u.id, 0 AS grp, 0::float8 AS dist, lower(u.username) AS name
         FROM users u WHERE lower(u.username) = @q::text)
        UNION ALL
        (SELECT p.id, 1, 0::float8, p.name FROM prefix p)
        UNION ALL
        -- The closest of at most 200 similar names (the first the GIN's bitmap yields): names
        -- sharing long parts (seed1a2b_1, seed1a2b_2, …) can all be similar to a query, and
        -- ranking every one of them would cost the table's size.
        (SELECT c.id, 2, c.dist, c.name
         FROM (SELECT u.id, (lower(u.username) <-> @q::text)::float8 AS dist, lower(u.username) AS name
               FROM users u WHERE (SELECT more FROM fill) AND lower(u.username) % @q::text LIMIT 200) c
         ORDER BY c.dist LIMIT @lim::int)
        UNION ALL
        (SELECT u.id, 3, 0::float8, lower(u.username)
         FROM users u
         WHERE (SELECT more FROM fill) AND to_tsvector('simple', u.bio) @@ plainto_tsquery('simple', @q::text)
         LIMIT @lim::int)
    ) g
    GROUP BY g.id
) m
ORDER BY m.grp, m.dist, m.name
LIMIT @lim::int;

-- name: UserLockScope :exec
-- Serializes one user's writes of @scope (repository's lockScope* names: API keys, collections,
-- sessions) for the rest of the transaction, so a cap on how many the user may hold is counted
-- and kept by one write at a time: concurrent writes at the cap cannot all pass the count. The
-- user id seeds the hash of the scope's name.
SELECT pg_advisory_xact_lock(hashtextextended(@scope::text, @user_id::bigint));

-- name: UserEmailsToRecheck :many
-- A batch of the accounts whose canonical email is not known to follow the current rule (a
-- non-ASCII email written since the last recheck, by this version or an older one), after id
-- @after (users_email_recheck_idx).
SELECT id, email, email_canonical FROM users
WHERE (octet_length(email) <> char_length(email) OR email_canonical LIKE 'duplicate:%')
  AND NOT email_canonical_checked AND id > @after::bigint
ORDER BY id
LIMIT @lim::int;

-- name: UserEmailRecheck :execrows
-- Stores the account's canonical email as the recheck computed it, if its email and canonical
-- form are still the ones it read (a concurrent change wins, and is rechecked in turn).
UPDATE users SET email_canonical = @email_canonical::text, email_canonical_checked = true
WHERE id = @id::bigint AND email = @email::text AND email_canonical = @old_canonical::text;

-- name: UserEmailCollisionCandidates :many
-- Every account the old and the new email rule may disagree on, and every account that lost its
-- address to another (users_email_recheck_idx): what `inkwell users collisions` starts from.
SELECT id, email, email_canonical, email_canonical_checked, username, email_verified_at, created_at
FROM users
WHERE octet_length(email) <> char_length(email) OR email_canonical LIKE 'duplicate:%'
ORDER BY id;

-- name: UserEmailsByCanonical :many
-- The accounts holding any of the canonical emails (users_email_key).
SELECT id, email, email_canonical, email_canonical_checked, username, email_verified_at, created_at
FROM users
WHERE email_canonical = ANY (@canonicals::text[])
ORDER BY id;

-- name: UserSetRole :one
UPDATE users SET role = @role::text, updated_at = now()
WHERE id = @id::bigint
RETURNING *;

-- name: UserSuspend :one
-- A suspension in force until suspended_until (9999-12-31: no end); suspending again replaces it.
UPDATE users SET suspended_until = @until::timestamptz, suspension_reason = @reason::text, updated_at = now()
WHERE id = @id::bigint
RETURNING *;

-- name: UserUnsuspend :one
-- Ends a suspension. When only_if_ended, only one whose time has come (the job that lifts a
-- suspension at its end must not lift a later one that replaced it).
UPDATE users SET suspended_until = NULL, suspension_reason = '', updated_at = now()
WHERE id = @id::bigint AND suspended_until IS NOT NULL
  AND (NOT @only_if_ended::boolean OR suspended_until <= now())
RETURNING *;
