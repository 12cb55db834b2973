-- +goose NO TRANSACTION
-- Issue #31, sitemaps: a sitemap page is a range of the publication order (search_seq, migration
-- 00024), so page N is one range scan of this index, never an OFFSET walk, and its cost is the
-- same on the first page and the thousandth (docs/API.md, "Sitemaps"). INCLUDE holds what a page
-- shows, so a page is an index-only scan; max(search_seq) (the number of pages) is one probe.

-- Without a transaction, so the index on articles is built CONCURRENTLY; the statements are
-- idempotent, so a failed run is simply run again (the drop clears an invalid half-built index).

-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS articles_sitemap_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_sitemap_idx ON articles (search_seq) INCLUDE (slug, updated_at)
    WHERE status = 'published' AND search_seq IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS articles_sitemap_idx;
