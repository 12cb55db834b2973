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

-- name: LikeSetManyCounted :one
-- Turns the likes of on_users on and those of off_users off for one item (each user in at most
-- one of the two, once) and adds the net change to one shard of the item's like count, in one
-- autocommitted statement: one round trip and one commit for a whole batch of likes. Only a real
-- change (off or absent -> on, on -> off) counts, so repeated likes count once. Returns how many
-- likes changed and the shard row as the change leaves it, version included, for the cache
-- (shard_touched false, and zeros, when the changes cancel out and no shard was written). A shard
-- may go below zero: its like may have gone to another shard.
WITH turned_on AS (
    INSERT INTO likes (user_id, biz, biz_id, liked)
    SELECT u.id, @biz::text, @biz_id::bigint, true
    FROM unnest(@on_users::bigint[]) AS u (id)
    ORDER BY u.id
    ON CONFLICT (user_id, biz, biz_id) DO UPDATE
    SET liked = true, updated_at = now()
    WHERE NOT likes.liked
    RETURNING 1
), turned_off AS (
    UPDATE likes SET liked = false, updated_at = now()
    WHERE biz = @biz::text AND biz_id = @biz_id::bigint AND user_id = ANY (@off_users::bigint[]) AND liked
    RETURNING 1
), delta AS (
    SELECT (SELECT count(*) FROM turned_on) AS ons, (SELECT count(*) FROM turned_off) AS offs
), shard AS (
    INSERT INTO interactives (biz, biz_id, shard, like_cnt, version)
    SELECT @biz::text, @biz_id::bigint, @shard::smallint, d.ons - d.offs, 1 FROM delta d
    WHERE d.ons <> d.offs
    ON CONFLICT (biz, biz_id, shard) DO UPDATE
    SET like_cnt = interactives.like_cnt + excluded.like_cnt, version = interactives.version + 1, updated_at = now()
    RETURNING read_cnt, like_cnt, collect_cnt, version
)
SELECT (d.ons + d.offs)::bigint AS changed,
    (s.version IS NOT NULL)::boolean AS shard_touched,
    coalesce(s.read_cnt, 0)::bigint AS read_cnt,
    coalesce(s.like_cnt, 0)::bigint AS like_cnt,
    coalesce(s.collect_cnt, 0)::bigint AS collect_cnt,
    coalesce(s.version, 0)::bigint AS version
FROM delta d LEFT JOIN shard s ON true;
