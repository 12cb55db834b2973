-- +goose NO TRANSACTION
-- Bounded article search at a million articles (docs/ARCHITECTURE.md, "Search"). A search ranks
-- the newest matches of its query; finding them with the plain GIN index meant reading every
-- match (tens of thousands of rows for an everyday word) to sort them by date. Each published
-- article now gets a place in publication order, search_seq, and the GIN index also holds that
-- place at three granularities: windows of 1,024, 8,192 and 65,536 consecutive publications. A
-- search asks the index for the matches of one window at a time, newest window first, and stops
-- once it has enough: the work follows the result, not the table. Every statement is idempotent:
-- without a transaction, a failed run is simply run again.

-- +goose Up
-- GIN operator classes for plain scalars (trusted since PostgreSQL 13), so one GIN index holds
-- the words and the window numbers together.
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE SEQUENCE IF NOT EXISTS articles_search_seq;

-- Nullable and without a default: a catalog change, no rewrite of a big table. Set by every
-- statement that publishes an article (queries/articles.sql); articles published before this
-- migration get theirs from the search backfill (repository.SearchRepository.BackfillSearch),
-- oldest publication first.
ALTER TABLE articles ADD COLUMN IF NOT EXISTS search_seq BIGINT;

-- +goose StatementBegin
-- The CJK bigrams of a text, as 00021 defined them, split out: inkwell_cjk_bigrams below calls it
-- only for text that holds a CJK character.
CREATE OR REPLACE FUNCTION inkwell_cjk_split(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(coalesce(s.ch || s.nx, s.ch), ' ' ORDER BY s.run_no, s.n), '')
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
-- A text without a CJK character (most of them) costs a length comparison (plain ASCII) or one
-- regular-expression test. One expression, not STRICT, so PostgreSQL inlines it into the document
-- function's expression: calling a SQL function whose body is a query costs more per call (tens
-- of microseconds: it was a third of the document's cost) than the text's words.
CREATE OR REPLACE FUNCTION inkwell_cjk_bigrams(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN octet_length(t) = char_length(t)
                  OR t !~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]' THEN ''
                ELSE inkwell_cjk_split(t) END
$$;
-- +goose StatementEnd

-- A build that failed half-way leaves an invalid index behind, which IF NOT EXISTS would keep:
-- this migration only runs again after a failure, so the drop is a no-op on its first run.
DROP INDEX CONCURRENTLY IF EXISTS articles_search_window_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_search_window_idx ON articles USING gin (
    search_vector,
    ((search_seq >> 10)::int),
    ((search_seq >> 13)::int),
    ((search_seq >> 16)::int))
    WHERE status = 'published';
-- The window index answers every query the plain one did.
DROP INDEX CONCURRENTLY IF EXISTS articles_search_idx;

-- The backfill's work list, now in publication order: published articles without a document or
-- without a place. Empty once they all have both, so finding the next batch is one probe.
DROP INDEX CONCURRENTLY IF EXISTS articles_search_missing_idx;
DROP INDEX CONCURRENTLY IF EXISTS articles_search_unplaced_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_search_unplaced_idx ON articles (published_at, id)
    WHERE status = 'published' AND (search_vector IS NULL OR search_seq IS NULL);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS articles_search_unplaced_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_search_missing_idx ON articles (id)
    WHERE status = 'published' AND search_vector IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_search_idx ON articles USING gin (search_vector) WHERE status = 'published';
DROP INDEX CONCURRENTLY IF EXISTS articles_search_window_idx;
ALTER TABLE articles DROP COLUMN IF EXISTS search_seq;
DROP SEQUENCE IF EXISTS articles_search_seq;
-- +goose StatementBegin
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
DROP FUNCTION IF EXISTS inkwell_cjk_split(text);
-- btree_gin stays installed: other objects may use it (a Down never drops an extension).
