-- name: ArticleRankScan :many
-- One batch of ranking candidates, newest-published first, after the keyset position
-- (before_published_at, before_id), never older than since. Only what scoring needs: the winners'
-- summaries are loaded once, at the end.
SELECT a.id, a.published_at
FROM articles a
WHERE a.status = 'published'
  AND a.published_at >= @since::timestamptz
  -- No "cursor IS NULL OR ...": an OR hides the keyset bound from the index, and a generic (prepared)
  -- plan would then read every newer row again for each batch. The first batch starts at +infinity.
  AND (a.published_at, a.id) < (COALESCE(sqlc.narg(before_published_at)::timestamptz, 'infinity'::timestamptz),
                                 COALESCE(sqlc.narg(before_id)::bigint, 9223372036854775807::bigint))
ORDER BY a.published_at DESC, a.id DESC
LIMIT @lim::int;

-- name: InteractiveLikesMany :many
-- An item's likes are the sum over its shards.
SELECT biz_id, sum(like_cnt)::bigint AS like_cnt FROM interactives
WHERE biz = @biz::text AND biz_id = ANY (@biz_ids::bigint[])
GROUP BY biz_id;

-- name: ArticleSummariesByIDs :many
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM articles a
WHERE a.id = ANY (@ids::bigint[]);

-- name: ArticlePublishedAmong :many
-- Which of a hot list's articles are still published: a primary-key lookup per id, so its cost is
-- the list's size, not the table's.
SELECT a.id FROM articles a WHERE a.id = ANY (@ids::bigint[]) AND a.status = 'published';
