-- name: CollectionInsert :one
INSERT INTO collections (owner_id, name, description)
VALUES (@owner_id::bigint, @name::text, @description::text)
RETURNING *;

-- name: CollectionCountByOwner :one
SELECT count(*)::int FROM collections WHERE owner_id = @owner_id::bigint;

-- name: CollectionGetByID :one
SELECT * FROM collections WHERE id = @id::bigint;

-- name: CollectionListByOwner :many
SELECT c.*
FROM collections c
WHERE c.owner_id = @owner_id::bigint
ORDER BY c.created_at, c.id;

-- name: CollectionUpdate :one
-- Returns the folder with its article count (kept by a trigger), as the list shows it.
UPDATE collections c
SET name = @name::text, description = @description::text, updated_at = now()
WHERE c.id = @id::bigint
RETURNING c.*;

-- name: CollectionLockForDelete :one
-- Locks the folder before CollectionDelete. An Add in flight holds a key-share lock on the folder
-- (its item's foreign key), so this waits for it to commit, and CollectionDelete, a later
-- statement, then sees (and uncounts) its item; an Add arriving later waits and finds no folder.
-- Returns the owner, whose collected flags the deletion changes.
SELECT owner_id FROM collections WHERE id = @id::bigint FOR UPDATE;

-- name: CollectionDelete :many
-- Deletes the folder and returns the articles it held, whose collect counters must go down.
WITH gone AS (
    DELETE FROM collection_items WHERE collection_id = @id::bigint RETURNING article_id
), folder AS (
    DELETE FROM collections WHERE id = @id::bigint RETURNING id
)
SELECT gone.article_id::bigint AS article_id FROM gone;

-- name: CollectionItemInsert :execrows
INSERT INTO collection_items (collection_id, article_id)
VALUES (@collection_id::bigint, @article_id::bigint)
ON CONFLICT DO NOTHING;

-- name: CollectionItemDelete :execrows
DELETE FROM collection_items WHERE collection_id = @collection_id::bigint AND article_id = @article_id::bigint;

-- name: CollectionItemList :many
SELECT i.article_id, i.created_at
FROM collection_items i
JOIN articles a ON a.id = i.article_id
WHERE i.collection_id = @collection_id::bigint
  AND (i.created_at, i.article_id) < (@before_created_at::timestamptz, @before_article_id::bigint)
ORDER BY i.created_at DESC, i.article_id DESC
LIMIT @lim::int;

-- name: CollectionItemCollectedAmong :many
SELECT DISTINCT i.article_id
FROM collection_items i
JOIN collections c ON c.id = i.collection_id
WHERE c.owner_id = @owner_id::bigint AND i.article_id = ANY (@article_ids::bigint[]);

-- name: InteractiveAddCollects :one
-- Collects stay on shard 0. Returns that shard row as this change leaves it, version included, for
-- the cache to store.
INSERT INTO interactives (biz, biz_id, collect_cnt, version)
VALUES (@biz::text, @biz_id::bigint, GREATEST(@delta::bigint, 0), 1)
ON CONFLICT (biz, biz_id, shard) DO UPDATE
SET collect_cnt = GREATEST(interactives.collect_cnt + @delta::bigint, 0), version = interactives.version + 1, updated_at = now()
RETURNING read_cnt, like_cnt, collect_cnt, version;

-- name: ArticleGetByIDs :many
-- Summaries (no bodies) of the articles of a folder's or a history's page.
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM articles a WHERE a.id = ANY (@ids::bigint[]);
