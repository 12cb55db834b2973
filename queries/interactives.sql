-- name: InteractiveGetMany :many
-- Every shard row of each item (an item's counts are the sums over its shards).
SELECT biz_id, shard, read_cnt, like_cnt, collect_cnt, version FROM interactives
WHERE biz = @biz::text AND biz_id = ANY (@biz_ids::bigint[]);

-- name: InteractiveAddLikes :one
-- Moves one shard's like count (no clamp at zero: a shard may hold an unlike whose like went to
-- another shard). Returns the shard row as this change leaves it, version included, for the cache.
INSERT INTO interactives (biz, biz_id, shard, like_cnt, version)
VALUES (@biz::text, @biz_id::bigint, @shard::smallint, @delta::bigint, 1)
ON CONFLICT (biz, biz_id, shard) DO UPDATE
SET like_cnt = interactives.like_cnt + @delta::bigint, version = interactives.version + 1, updated_at = now()
RETURNING read_cnt, like_cnt, collect_cnt, version;

-- name: InteractiveDelete :exec
DELETE FROM interactives WHERE biz = @biz::text AND biz_id = @biz_id::bigint;

-- name: LikeOn :execrows
-- Affects a row only when the like is new or was off, so liking twice counts once.
INSERT INTO likes (user_id, biz, biz_id, liked)
VALUES (@user_id::bigint, @biz::text, @biz_id::bigint, true)
ON CONFLICT (user_id, biz, biz_id) DO UPDATE
SET liked = true, updated_at = now()
WHERE NOT likes.liked;

-- name: LikeOff :execrows
UPDATE likes SET liked = false, updated_at = now()
WHERE user_id = @user_id::bigint AND biz = @biz::text AND biz_id = @biz_id::bigint AND liked;

-- name: LikeListLikedAmong :many
SELECT biz_id FROM likes
WHERE user_id = @user_id::bigint AND biz = @biz::text AND biz_id = ANY (@biz_ids::bigint[]) AND liked;

-- name: LikeDeleteByItem :exec
DELETE FROM likes WHERE biz = @biz::text AND biz_id = @biz_id::bigint;

-- name: LikeOnCounted :one
-- LikeOn and, only when it changed the like, one shard of the item's like count, in one
-- autocommitted statement (one round trip, one commit). No row when the like was already on.
-- Returns the shard row as the change leaves it, version included, for the cache.
WITH changed AS (
    INSERT INTO likes (user_id, biz, biz_id, liked)
    VALUES (@user_id::bigint, @biz::text, @biz_id::bigint, true)
    ON CONFLICT (user_id, biz, biz_id) DO UPDATE
    SET liked = true, updated_at = now()
    WHERE NOT likes.liked
    RETURNING biz, biz_id
)
INSERT INTO interactives (biz, biz_id, shard, like_cnt, version)
SELECT c.biz, c.biz_id, @shard::smallint, 1, 1 FROM changed c
ON CONFLICT (biz, biz_id, shard) DO UPDATE
SET like_cnt = interactives.like_cnt + 1, version = interactives.version + 1, updated_at = now()
RETURNING read_cnt, like_cnt, collect_cnt, version;

-- name: LikeOffCounted :one
-- LikeOff and, only when it changed the like, one shard of the item's like count (see
-- LikeOnCounted). A shard may go below zero: its like may have gone to another shard.
WITH changed AS (
    UPDATE likes SET liked = false, updated_at = now()
    WHERE user_id = @user_id::bigint AND biz = @biz::text AND biz_id = @biz_id::bigint AND liked
    RETURNING biz, biz_id
)
INSERT INTO interactives (biz, biz_id, shard, like_cnt, version)
SELECT c.biz, c.biz_id, @shard::smallint, -1, 1 FROM changed c
ON CONFLICT (biz, biz_id, shard) DO UPDATE
SET like_cnt = interactives.like_cnt - 1, version = interactives.version + 1, updated_at = now()
RETURNING read_cnt, like_cnt, collect_cnt, version;
