-- name: SitemapLastSeq :one
-- The last place taken in publication order by a published article: the number of sitemap pages
-- follows from it. One probe at the end of articles_sitemap_idx, not a count.
SELECT coalesce(max(search_seq), 0)::bigint AS last_seq
FROM articles
WHERE status = 'published' AND search_seq IS NOT NULL;

-- name: SitemapPage :many
-- One sitemap page: the published articles whose place in publication order is in [from, until),
-- oldest first. A range of articles_sitemap_idx (index-only): at most until - from rows, whatever
-- the table's size.
SELECT search_seq::bigint AS seq, slug, updated_at
FROM articles
WHERE status = 'published' AND search_seq IS NOT NULL
  AND search_seq >= @from_seq::bigint AND search_seq < @until_seq::bigint
ORDER BY search_seq;
