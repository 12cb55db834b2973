-- name: UserBlockLockPair :exec
-- Serializes the writes between two users (a block, a follow) for the rest of the transaction, in
-- whichever order they are named: a follow that checked for a block cannot commit beside the block
-- that ends it.
SELECT pg_advisory_xact_lock(hashtextextended(
    'inkwell:block:' || least(@a::bigint, @b::bigint) || ':' || greatest(@a::bigint, @b::bigint), 0));

-- name: UserBlockInsert :execrows
-- One row per blocker and blocked user; blocking twice changes nothing (0 rows).
INSERT INTO user_blocks (blocker_id, blocked_id)
VALUES (@blocker_id::bigint, @blocked_id::bigint)
ON CONFLICT DO NOTHING;

-- name: UserBlockDelete :execrows
DELETE FROM user_blocks
WHERE blocker_id = @blocker_id::bigint AND blocked_id = @blocked_id::bigint;

-- name: UserBlockBetween :one
-- Whether a blocks b and whether b blocks a: two probes of the primary key.
SELECT
    EXISTS (SELECT 1 FROM user_blocks WHERE blocker_id = @a::bigint AND blocked_id = @b::bigint)::boolean AS a_blocks_b,
    EXISTS (SELECT 1 FROM user_blocks WHERE blocker_id = @b::bigint AND blocked_id = @a::bigint)::boolean AS b_blocks_a;

-- name: UserBlockListBlockedIDs :many
-- Everyone a user blocks: the set the user's lists are filtered by (cached per user).
SELECT blocked_id FROM user_blocks WHERE blocker_id = @blocker_id::bigint ORDER BY blocked_id;

-- name: UserBlockListRecent :many
-- A user's blocks, newest first, after the keyset position (created_at, blocked_id) of the last
-- one seen. The order is the index's own (created_at DESC, blocked_id ASC), so the cursor is
-- "older, or as old with a larger id": the index condition is created_at <= the cursor's, and only
-- blocks made at the very same microsecond are read and skipped.
SELECT b.blocked_id, b.created_at, u.username, u.bio, u.image
FROM user_blocks b
JOIN users u ON u.id = b.blocked_id
WHERE b.blocker_id = @blocker_id::bigint
  AND b.created_at <= @before_created_at::timestamptz
  AND (b.created_at < @before_created_at::timestamptz OR b.blocked_id > @after_id::bigint)
ORDER BY b.created_at DESC, b.blocked_id
LIMIT @lim::int;
