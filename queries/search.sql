-- Full-text search over published articles (docs/ARCHITECTURE.md, "Search"; README "Search").
-- The query is websearch_to_tsquery over the words of q in the configured language, AND the CJK
-- part (phrases of bigrams, built by domain.SearchTerms), so any text a user types is a query.

-- name: ArticleSearch :many
-- Bounded work whatever the term: the candidates are the newest @depth matches (walking
-- articles_published_at_idx with the @@ filter for a common term, the GIN index and a top-N sort
-- for a rare one; the planner picks with the term's statistics, as the query runs with a custom
-- plan). Only those are ranked: ts_rank over the weighted vector (title A > description B >
-- body C; ts_rank saturates repeated words, so a body repeating a word cannot outrank a title
-- holding it), times a likes boost (1 + 0.1·ln(1 + likes)) and a freshness boost
-- (1 + 0.25·exp(-age / 14 days), age at the snapshot). The snapshot (page 1's now(), carried by
-- the cursor) bounds the candidates by published_at, so articles published while a client pages
-- never push one it has not seen yet past the depth; the page is a keyset (score, id) over them.
-- total is the number of candidates (the hits, up to @depth).
WITH candidates AS (
    SELECT a.id, a.published_at, a.search_vector
    FROM articles a
    WHERE a.status = 'published'
      AND a.search_vector @@ (websearch_to_tsquery((@search_config::text)::regconfig, @words::text) && (@cjk::text)::tsquery)
      AND a.published_at <= coalesce(sqlc.narg(snapshot)::timestamptz, now())
      AND (sqlc.narg(tag)::text IS NULL OR EXISTS (
            SELECT 1 FROM article_tags t
            WHERE t.tag = sqlc.narg(tag)::text AND t.created_at = a.created_at AND t.article_id = a.id))
      AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
    ORDER BY a.published_at DESC, a.id DESC
    LIMIT @depth::int
), scored AS (
    SELECT c.id,
           (ts_rank(c.search_vector, websearch_to_tsquery((@search_config::text)::regconfig, @words::text) && (@cjk::text)::tsquery)::float8
            * (1 + 0.1 * ln(1 + greatest(coalesce(l.likes, 0), 0)::float8))
            * (1 + 0.25 * exp(-greatest(extract(epoch FROM (coalesce(sqlc.narg(snapshot)::timestamptz, now()) - c.published_at))::float8, 0) / 1209600.0))
           )::float8 AS score,
           count(*) OVER () AS total
    FROM candidates c
    LEFT JOIN LATERAL (
        SELECT sum(i.like_cnt) AS likes FROM interactives i WHERE i.biz = 'article' AND i.biz_id = c.id
    ) l ON true
), page AS (
    -- The page first, then its articles: one primary-key probe per hit on the page, not per
    -- candidate.
    SELECT s.id, s.score, s.total
    FROM scored s
    WHERE (s.score, s.id) < (@after_score::float8, @after_id::bigint)
    ORDER BY s.score DESC, s.id DESC
    LIMIT @lim::int
)
SELECT p.score::float8 AS score, p.total::bigint AS total,
       coalesce(sqlc.narg(snapshot)::timestamptz, now())::timestamptz AS snapshot,
       a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at
FROM page p
JOIN articles a ON a.id = p.id
ORDER BY p.score DESC, p.id DESC;

-- name: ArticleSearchSnippets :many
-- The snippets of one page only: ts_headline over the description and the start of the body,
-- with \x01 and \x02 around matched words (stripped from the text first, so they can only be
-- marks); web turns them into <mark> after escaping the rest. The text is returned too when the
-- query has CJK runs, which ts_headline cannot mark (domain.Snippet does).
SELECT a.id,
       ts_headline((@search_config::text)::regconfig,
                   translate(a.description || E'\n' || left(a.body, 20000), E'\x01\x02', ''),
                   websearch_to_tsquery((@search_config::text)::regconfig, @words::text),
                   'StartSel=' || E'\x01' || ', StopSel=' || E'\x02' ||
                   ', MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "')::text AS headline,
       CASE WHEN @with_text::bool
            THEN translate(a.description || E'\n' || left(a.body, 20000), E'\x01\x02', '')
            ELSE '' END::text AS text
FROM articles a
WHERE a.id = ANY (@ids::bigint[]) AND a.status = 'published';

-- name: ArticleSearchLanguage :one
-- The configured text search configuration, checked at start: an unknown name is an error.
SELECT (@name::text)::regconfig::text AS name;

-- name: ArticleSearchBackfillLock :one
-- One instance of a fleet backfills at a time (its batch's transaction holds the lock).
SELECT pg_try_advisory_xact_lock(hashtextextended('inkwell:search-backfill', 0));

-- name: ArticleSearchBackfill :many
-- Published articles without a search document (written before migration 00021, or by an older
-- instance during a rolling upgrade), a batch at a time off articles_search_missing_idx.
UPDATE articles a
SET search_vector = inkwell_search_document((@search_config::text)::regconfig, a.title, a.description, a.body)
WHERE a.id IN (
    SELECT m.id FROM articles m
    WHERE m.status = 'published' AND m.search_vector IS NULL
    ORDER BY m.id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED)
  AND a.status = 'published'
RETURNING a.id;

-- name: ArticleSearchReindex :one
-- `inkwell search reindex`: recompute the documents of the articles after @after_id, a batch of
-- ids at a time (primary key order), in the configured language. The SET reads the row as the
-- UPDATE finds it, so an edit committed meanwhile is indexed as edited.
WITH batch AS (
    SELECT b.id FROM articles b WHERE b.id > @after_id::bigint ORDER BY b.id LIMIT @lim::int
), updated AS (
    UPDATE articles a
    SET search_vector = inkwell_search_document((@search_config::text)::regconfig, a.title, a.description, a.body)
    FROM batch
    WHERE a.id = batch.id AND a.status = 'published'
    RETURNING a.id
)
SELECT coalesce((SELECT max(batch.id) FROM batch), 0)::bigint AS last_id,
       (SELECT count(*) FROM batch)::bigint AS scanned,
       (SELECT count(*) FROM updated)::bigint AS reindexed;
