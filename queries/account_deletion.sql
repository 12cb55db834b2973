-- Deleting an account (`inkwell users delete`, repository.AccountEraser): the statements of one
-- unit of work, in this order. The user's row is locked first, so writes of the account that
-- start meanwhile wait for it and then find it gone.

-- name: AccountLockByUsername :one
SELECT id, username, email FROM users WHERE lower(username) = lower(@username::text) FOR UPDATE;

-- name: AccountUncountLikes :many
-- The likes the user gave go, and each liked item's count goes down by one on shard 0 (a shard
-- may go below zero; the sum over the shards is exact). Returns the changed shard rows for the
-- counters cache. (The likes triggers update the favorites projection and counts.)
WITH gone AS (
    DELETE FROM likes WHERE user_id = @user_id::bigint RETURNING biz, biz_id, liked
)
INSERT INTO interactives AS i (biz, biz_id, shard, like_cnt, version)
SELECT g.biz, g.biz_id, 0, -count(*), 1 FROM gone g WHERE g.liked GROUP BY g.biz, g.biz_id ORDER BY g.biz, g.biz_id
ON CONFLICT (biz, biz_id, shard) DO UPDATE
SET like_cnt = i.like_cnt + excluded.like_cnt, version = i.version + 1, updated_at = now()
RETURNING i.biz, i.biz_id, i.read_cnt, i.like_cnt, i.collect_cnt, i.version;

-- name: AccountLockCollections :many
-- Locked before their items are read, as a folder's own delete does: an item added while they are
-- deleted would otherwise go with the cascade without being uncounted.
SELECT id FROM collections WHERE owner_id = @user_id::bigint ORDER BY id FOR UPDATE;

-- name: AccountUncountCollects :many
-- The user's folder items go, and each article's collect count goes down by the items it had
-- (collects live on shard 0). Returns the changed shard rows for the counters cache.
WITH gone AS (
    DELETE FROM collection_items ci USING collections c
    WHERE c.id = ci.collection_id AND c.owner_id = @user_id::bigint
    RETURNING ci.article_id
), per_article AS (
    SELECT g.article_id, count(*) AS n FROM gone g GROUP BY g.article_id
)
UPDATE interactives i
SET collect_cnt = GREATEST(i.collect_cnt - p.n, 0), version = i.version + 1, updated_at = now()
FROM per_article p
WHERE i.biz = 'article' AND i.biz_id = p.article_id AND i.shard = 0
RETURNING i.biz_id, i.read_cnt, i.like_cnt, i.collect_cnt, i.version;

-- name: AccountArticles :many
-- The user's own articles, every status, for their caches and their deleted events.
SELECT id, slug, author_id, title, tag_list, status FROM articles WHERE author_id = @user_id::bigint ORDER BY id;

-- name: AccountDropArticleInteractions :exec
-- The likes and counter rows of the user's articles go before the articles (as one article's
-- delete does: a like in flight holds those rows while it waits for the article's lock).
WITH counters AS (
    DELETE FROM interactives WHERE biz = 'article' AND biz_id = ANY (@article_ids::bigint[])
)
DELETE FROM likes WHERE biz = 'article' AND biz_id = ANY (@article_ids::bigint[]);

-- name: AccountPlaceholderComments :execrows
-- The user's comments that others answered stay as placeholders (no body, no author: issue #32),
-- so the replies keep their thread; they run first, so the delete below takes only leaves.
UPDATE comments SET body = '', author_id = NULL, deleted_at = now(), edited_at = NULL
WHERE author_id = @user_id::bigint AND replies_count > 0;

-- name: AccountDeleteComments :execrows
-- The comments the user wrote, on anyone's article (the cascade would take them too; counted here).
DELETE FROM comments WHERE author_id = @user_id::bigint;

-- name: AccountFollowers :many
SELECT follower_id FROM follows WHERE followee_id = @user_id::bigint;

-- name: AccountFollowees :many
SELECT followee_id FROM follows WHERE follower_id = @user_id::bigint;

-- name: AccountDeleteStoredAnswers :exec
-- Answers stored for the user's Idempotency-Keys (they may hold the user's articles and comments).
DELETE FROM idempotency_keys WHERE scope = 'user:' || @user_id::bigint;

-- name: AccountDelete :execrows
-- The rest goes with the row, by the foreign keys' cascades: articles (with their comments, tags,
-- folder items of others, reading histories, notifications), follows both ways, folders, reading
-- history, notifications, sessions and refresh tokens, API keys, account codes.
DELETE FROM users WHERE id = @user_id::bigint;
