-- +goose NO TRANSACTION
-- +goose Up
-- Outside a transaction, because the indexes on users and tag_article_counts are built
-- CONCURRENTLY (writes go on while they build). Every statement can run again after a failure.

-- Trigram similarity and distance (a trusted extension since PostgreSQL 13).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The lexicon of indexed words behind "did you mean" (repository.SearchLexicon): every word of
-- 3–32 letters or digits (not digits only, no CJK) of the published articles folded so far, with
-- the number of articles it occurred in when they were folded (a tie-break between equally close
-- suggestions). A background pass fills it, off the publish path. Words are the 'simple'
-- configuration's lexemes: lower-cased, never stemmed, so a suggestion is a real word.
CREATE TABLE IF NOT EXISTS search_words (
    word TEXT PRIMARY KEY,
    ndoc BIGINT NOT NULL
);
-- GIN, not GiST: on a lexicon of 890,000 words, GiST's nearest-first walk (`ORDER BY word <-> q
-- LIMIT 20`) read most of the index (320–530 ms), while GIN answers `word % q` (similarity ≥
-- pg_trgm.similarity_threshold, 0.3) from the posting lists of q's trigrams (~12 ms, then a top-N
-- sort of those few hundred). Misspellings too far for the threshold (dargon/dragon: 0.27; short
-- words) are found by their edit-distance-1 variants on the primary key instead.
CREATE INDEX IF NOT EXISTS search_words_trgm_idx ON search_words USING gin (word gin_trgm_ops);

-- How far the lexicon pass got: every article with an id up to article_watermark has been looked
-- at (and folded if it was published then). One row.
CREATE TABLE IF NOT EXISTS search_lexicon_state (
    id                BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id),
    article_watermark BIGINT      NOT NULL DEFAULT 0,
    folded_at         TIMESTAMPTZ
);
INSERT INTO search_lexicon_state DEFAULT VALUES ON CONFLICT DO NOTHING;

-- GET /api/search/users: a username prefix is a range of this btree, read in its order (COLLATE
-- "C": byte order, so LIKE 'abc%' is an index range and the same index gives ORDER BY; with the
-- database's collation the planner walked users_username_key from its start and filtered);
-- similarity (`%`) reads the trigram GIN; bio words are a GIN over the bio's 'simple' vector.
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_username_prefix_idx ON users ((lower(username) COLLATE "C"));
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_username_trgm_idx ON users USING gin (lower(username) gin_trgm_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_bio_words_idx ON users USING gin (to_tsvector('simple', bio));

-- GET /api/search/tags: the tags in use with a prefix, case-insensitively.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tag_article_counts_prefix_idx ON tag_article_counts (lower(tag) text_pattern_ops)
    WHERE published > 0;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS tag_article_counts_prefix_idx;
DROP INDEX CONCURRENTLY IF EXISTS users_bio_words_idx;
DROP INDEX CONCURRENTLY IF EXISTS users_username_trgm_idx;
DROP INDEX CONCURRENTLY IF EXISTS users_username_prefix_idx;
DROP TABLE IF EXISTS search_lexicon_state;
DROP TABLE IF EXISTS search_words;
-- pg_trgm stays installed: it may have been there before this migration, and other objects may
-- use it (a Down never drops an extension).
