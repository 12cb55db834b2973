-- name: TagSearchPrefix :many
-- Tag autocomplete: tags in use starting with @prefix (lower-cased, LIKE-escaped by the caller),
-- most used first. A range of tag_article_counts_prefix_idx, sorted by count: its cost is the number
-- of tags sharing the prefix, never the number of articles.
SELECT c.tag, c.published
FROM tag_article_counts c
WHERE lower(c.tag) LIKE @prefix::text AND c.published > 0
ORDER BY c.published DESC, c.tag
LIMIT @lim::int;
