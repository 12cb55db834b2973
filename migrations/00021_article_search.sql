-- +goose NO TRANSACTION
-- Full-text search over published articles (docs/ARCHITECTURE.md, "Search"). No trigger: every
-- statement that writes an article's text or status (queries/articles.sql) sets search_vector
-- itself, in the same statement, so the index is never behind a commit on any instance. The
-- column is nullable, so adding it is a catalog change and not a rewrite of a big table; rows
-- written before it (and after a language change) are filled by the backfill and by
-- `inkwell search reindex`. Each statement here is idempotent: without a transaction, a failed run
-- is simply run again.

-- +goose Up
-- +goose StatementBegin
-- CJK text has no spaces, and the default parser makes one word of a whole run of Han, kana or
-- Hangul, so 缓存 could never find 缓存击穿. Each run becomes its overlapping bigrams, in order
-- ("缓存 存击 击穿 穿"), so a query's bigrams match as a phrase; the last character of a run is
-- kept on its own too, so a query of one character (a prefix query, 字:*) finds it anywhere. Linear in the text: string_to_array splits a run into characters once (substr(run, i, 2)
-- per character would walk the string each time: quadratic).
CREATE OR REPLACE FUNCTION inkwell_cjk_bigrams(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(coalesce(s.ch || s.nx, s.ch), ' '
                               ORDER BY s.run_no, s.n), '')
    FROM (
        SELECT r.run_no, c.n, c.ch, lead(c.ch) OVER (PARTITION BY r.run_no ORDER BY c.n) AS nx
        FROM regexp_split_to_table(
                 regexp_replace(t, '[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+', ' ', 'g'),
                 ' ') WITH ORDINALITY AS r(run, run_no)
        CROSS JOIN LATERAL unnest(string_to_array(nullif(r.run, ''), NULL)) WITH ORDINALITY AS c(ch, n)
    ) s
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- The indexed document: title (weight A) above description (B) above body (C), each in the
-- configured language, plus the CJK bigrams of each with the same weight. The input is bounded
-- (a tsvector holds at most 1 MB of lexemes, SQLSTATE 54000, and positions stop at 16,383
-- anyway): the first 100,000 characters of the body are indexed as words and the first 20,000 as
-- CJK bigrams, which keeps the largest body the API takes well inside the limit.
CREATE OR REPLACE FUNCTION inkwell_search_document(cfg regconfig, title text, description text, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector(cfg, coalesce(left(title, 1000), '')), 'A')
        || setweight(to_tsvector(cfg, coalesce(left(description, 5000), '')), 'B')
        || setweight(to_tsvector(cfg, coalesce(left(body, 100000), '')), 'C')
        || setweight(to_tsvector('simple', inkwell_cjk_bigrams(coalesce(left(title, 1000), ''))), 'A')
        || setweight(to_tsvector('simple', inkwell_cjk_bigrams(coalesce(left(description, 5000), ''))), 'B')
        || setweight(to_tsvector('simple', inkwell_cjk_bigrams(coalesce(left(body, 20000), ''))), 'C')
$$;
-- +goose StatementEnd

ALTER TABLE articles ADD COLUMN IF NOT EXISTS search_vector tsvector;

-- A build that failed half-way leaves an invalid index behind, which IF NOT EXISTS would keep:
-- this migration only runs again after a failure, so the drop is a no-op on its first run.
DROP INDEX CONCURRENTLY IF EXISTS articles_search_idx;
-- Only published articles are searchable, so only they are indexed.
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_search_idx ON articles USING gin (search_vector) WHERE status = 'published';
-- The backfill's work list: published articles without a document. Empty once they all have one,
-- so finding the next batch (or that there is none) is one probe, never a scan of the table.
DROP INDEX CONCURRENTLY IF EXISTS articles_search_missing_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_search_missing_idx ON articles (id)
    WHERE status = 'published' AND search_vector IS NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS articles_search_missing_idx;
DROP INDEX CONCURRENTLY IF EXISTS articles_search_idx;
ALTER TABLE articles DROP COLUMN IF EXISTS search_vector;
DROP FUNCTION IF EXISTS inkwell_search_document(regconfig, text, text, text);
DROP FUNCTION IF EXISTS inkwell_cjk_bigrams(text);
