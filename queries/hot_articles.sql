-- name: HotArticleLockForReplace :exec
-- Two replacements queue behind each other (a ranking lock that changed hands mid-run) instead of
-- one failing on the other's positions. Readers are not blocked: SHARE ROW EXCLUSIVE does not
-- conflict with SELECT, which sees the previous ranking until the replacement commits.
LOCK TABLE hot_articles IN SHARE ROW EXCLUSIVE MODE;

-- name: HotArticleDeleteAll :exec
DELETE FROM hot_articles;

-- name: HotArticleInsertRanking :exec
-- Unnests in one select list advance together (zip), one row per listed article.
INSERT INTO hot_articles (position, article_id, likes, score, ranked_at)
SELECT z.position, z.article_id, z.likes, z.score, @ranked_at::timestamptz
FROM (SELECT unnest(@positions::int[]) AS position, unnest(@article_ids::bigint[]) AS article_id,
             unnest(@likes::bigint[]) AS likes, unnest(@scores::float8[]) AS score) z;

-- name: HotArticleListAll :many
SELECT position, article_id, likes, score, ranked_at FROM hot_articles ORDER BY position;
