-- Full-text search over published articles (docs/ARCHITECTURE.md, "Search"; README "Search").
-- The query is websearch_to_tsquery over the words of q in the configured language, AND the CJK
-- part (phrases of bigrams, built by domain.SearchTerms), so any text a user types is a query.

-- name: ArticleSearchSnapshot :one
-- What a search needs before it reads any article (repository.planSearch): the snapshot (the last
-- place in publication order, and the time) and how many articles are published, with the tag
-- and by the author. Each part is one probe.
SELECT coalesce(pg_sequence_last_value('articles_search_seq'::regclass), 0)::bigint AS snapshot_seq,
       now()::timestamptz AS snapshot_at,
       (SELECT coalesce(sum(c.published), 0) FROM site_article_counts c)::bigint AS published,
       (SELECT coalesce(max(t.published), 0) FROM tag_article_counts t WHERE t.tag = sqlc.narg(tag)::text)::bigint AS tag_published,
       (SELECT coalesce(max(x.published), 0) FROM author_article_counts x WHERE x.author_id = sqlc.narg(author_id)::bigint)::bigint AS author_published;

-- name: SearchWordsEstimate :many
-- How common each of @words is, for planning a search (repository.searchWords caches the answers):
-- its lexeme in the configured language ('' for a stop word, which the query drops) and the
-- articles the lexicon counted with that lexeme, over the words that share it (communication,
-- communicate, ... all search as 'communic'), -1 when the lexicon has none. The words sharing a
-- lexeme are found by prefix off the lexicon's trigram index (a stem is a prefix of the words it
-- comes from, bar a final letter: hence the word itself too).
WITH q AS (
    SELECT w.word, (tsvector_to_array(to_tsvector((@search_config::text)::regconfig, w.word)))[1] AS lexeme
    FROM unnest(@words::text[]) AS w(word)
)
SELECT q.word::text AS word, coalesce(q.lexeme, '')::text AS lexeme,
       coalesce((SELECT sum(f.ndoc) FROM (
            SELECT x.word, x.ndoc FROM search_words x
            WHERE length(q.lexeme) >= 3
              AND x.word LIKE replace(replace(replace(q.lexeme, '\', '\\'), '%', '\%'), '_', '\_') || '%'
            UNION
            SELECT x.word, x.ndoc FROM search_words x WHERE x.word = q.word
        ) f
        WHERE (tsvector_to_array(to_tsvector((@search_config::text)::regconfig, f.word)))[1] = q.lexeme), -1)::bigint AS ndoc
FROM q;

-- name: SearchWordsLexemes :many
-- The lexeme of each of @words in the configured language ('' for a stop word): which words of a
-- hit's text match the query, for its snippet (repository.snippets caches the answers).
SELECT w.word::text AS word,
       coalesce((tsvector_to_array(to_tsvector((@search_config::text)::regconfig, w.word)))[1], '')::text AS lexeme
FROM unnest(@words::text[]) AS w(word);

-- The candidates of a search are the newest @depth matches (by place in publication order, up to
-- the snapshot's) of the query: websearch_to_tsquery over the words in the configured language,
-- AND the CJK part. Each is returned as a list shows it (no body), with ts_rank over its weighted
-- vector (title A > description B > body C; ts_rank saturates repeated words, so a body repeating
-- a word cannot outrank a title holding it) and its counters (the sums of its counter shards, read
-- here for the candidates only: through the counters cache, each search would fill it with a few
-- hundred cold items; the page's hits show them, so the page needs no second counters lookup);
-- the caller adds the boosts (domain.SearchScore, from the likes) and orders the page. Three
-- of the four statements below walk windows of publication places newest first, one window a
-- probe of articles_search_window_idx (the words and the window number, both in the GIN index),
-- and stop once @depth matches came back; which size fits depends on how common the query is
-- (repository.planSearch). The last reads every match, for queries rare enough that all their
-- matches are few. Filters: a tag (its projection's key) and an author.

-- name: ArticleSearchWindow10 :many
-- Windows of 1,024 places, from @top down to @bottom.
WITH q AS MATERIALIZED (
    SELECT websearch_to_tsquery((@search_config::text)::regconfig, @words::text) && (@cjk::text)::tsquery AS tsq
)
SELECT m.id, m.slug, m.author_id, m.title, m.description, m.tag_list, m.version, m.created_at, m.updated_at,
       m.published_at, ts_rank(m.search_vector, q.tsq)::float8 AS rank,
       coalesce(l.reads, 0)::bigint AS reads, coalesce(l.likes, 0)::bigint AS likes, coalesce(l.collects, 0)::bigint AS collects
FROM q, generate_series(@top::int, @bottom::int, -1) AS w(n)
CROSS JOIN LATERAL (
    SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.version, a.created_at, a.updated_at,
           a.published_at, a.search_vector, a.search_seq
    FROM articles a
    WHERE a.status = 'published' AND a.search_vector @@ q.tsq AND (a.search_seq >> 10)::int = w.n
      AND a.search_seq <= @snapshot_seq::bigint
      AND (sqlc.narg(tag)::text IS NULL OR EXISTS (
            SELECT 1 FROM article_tags t
            WHERE t.tag = sqlc.narg(tag)::text AND t.created_at = a.created_at AND t.article_id = a.id))
      AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
    ORDER BY a.search_seq DESC
) m
LEFT JOIN LATERAL (
    SELECT sum(i.read_cnt) AS reads, sum(i.like_cnt) AS likes, sum(i.collect_cnt) AS collects
    FROM interactives i WHERE i.biz = 'article' AND i.biz_id = m.id
) l ON true
LIMIT @depth::int;

-- name: ArticleSearchWindow13 :many
-- Windows of 8,192 places, from @top down to @bottom.
WITH q AS MATERIALIZED (
    SELECT websearch_to_tsquery((@search_config::text)::regconfig, @words::text) && (@cjk::text)::tsquery AS tsq
)
SELECT m.id, m.slug, m.author_id, m.title, m.description, m.tag_list, m.version, m.created_at, m.updated_at,
       m.published_at, ts_rank(m.search_vector, q.tsq)::float8 AS rank,
       coalesce(l.reads, 0)::bigint AS reads, coalesce(l.likes, 0)::bigint AS likes, coalesce(l.collects, 0)::bigint AS collects
FROM q, generate_series(@top::int, @bottom::int, -1) AS w(n)
CROSS JOIN LATERAL (
    SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.version, a.created_at, a.updated_at,
           a.published_at, a.search_vector, a.search_seq
    FROM articles a
    WHERE a.status = 'published' AND a.search_vector @@ q.tsq AND (a.search_seq >> 13)::int = w.n
      AND a.search_seq <= @snapshot_seq::bigint
      AND (sqlc.narg(tag)::text IS NULL OR EXISTS (
            SELECT 1 FROM article_tags t
            WHERE t.tag = sqlc.narg(tag)::text AND t.created_at = a.created_at AND t.article_id = a.id))
      AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
    ORDER BY a.search_seq DESC
) m
LEFT JOIN LATERAL (
    SELECT sum(i.read_cnt) AS reads, sum(i.like_cnt) AS likes, sum(i.collect_cnt) AS collects
    FROM interactives i WHERE i.biz = 'article' AND i.biz_id = m.id
) l ON true
LIMIT @depth::int;

-- name: ArticleSearchWindow16 :many
-- Windows of 65,536 places, from @top down to @bottom.
WITH q AS MATERIALIZED (
    SELECT websearch_to_tsquery((@search_config::text)::regconfig, @words::text) && (@cjk::text)::tsquery AS tsq
)
SELECT m.id, m.slug, m.author_id, m.title, m.description, m.tag_list, m.version, m.created_at, m.updated_at,
       m.published_at, ts_rank(m.search_vector, q.tsq)::float8 AS rank,
       coalesce(l.reads, 0)::bigint AS reads, coalesce(l.likes, 0)::bigint AS likes, coalesce(l.collects, 0)::bigint AS collects
FROM q, generate_series(@top::int, @bottom::int, -1) AS w(n)
CROSS JOIN LATERAL (
    SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.version, a.created_at, a.updated_at,
           a.published_at, a.search_vector, a.search_seq
    FROM articles a
    WHERE a.status = 'published' AND a.search_vector @@ q.tsq AND (a.search_seq >> 16)::int = w.n
      AND a.search_seq <= @snapshot_seq::bigint
      AND (sqlc.narg(tag)::text IS NULL OR EXISTS (
            SELECT 1 FROM article_tags t
            WHERE t.tag = sqlc.narg(tag)::text AND t.created_at = a.created_at AND t.article_id = a.id))
      AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
    ORDER BY a.search_seq DESC
) m
LEFT JOIN LATERAL (
    SELECT sum(i.read_cnt) AS reads, sum(i.like_cnt) AS likes, sum(i.collect_cnt) AS collects
    FROM interactives i WHERE i.biz = 'article' AND i.biz_id = m.id
) l ON true
LIMIT @depth::int;

-- name: ArticleSearchAll :many
-- Every match below @below_seq (at most the snapshot's place + 1), the newest @depth of them: for
-- a query rare enough that reading all its matches costs less than walking windows, and for the
-- rest of the history when the windows walked ran out before @depth. The matches are collected
-- first (MATERIALIZED: a plan walking the publication order from the newest, testing each row,
-- would read most of the table for a rare word); only the newest @depth are ranked.
WITH q AS MATERIALIZED (
    SELECT websearch_to_tsquery((@search_config::text)::regconfig, @words::text) && (@cjk::text)::tsquery AS tsq
), matches AS MATERIALIZED (
    SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.version, a.created_at, a.updated_at,
           a.published_at, a.search_vector, a.search_seq
    FROM articles a, q
    WHERE a.status = 'published' AND a.search_vector @@ q.tsq AND a.search_seq < @below_seq::bigint
      AND (sqlc.narg(tag)::text IS NULL OR EXISTS (
            SELECT 1 FROM article_tags t
            WHERE t.tag = sqlc.narg(tag)::text AND t.created_at = a.created_at AND t.article_id = a.id))
      AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
), newest AS (
    SELECT * FROM matches ORDER BY search_seq DESC LIMIT @depth::int
)
SELECT n.id, n.slug, n.author_id, n.title, n.description, n.tag_list, n.version, n.created_at, n.updated_at,
       n.published_at, ts_rank(n.search_vector, q.tsq)::float8 AS rank,
       coalesce(l.reads, 0)::bigint AS reads, coalesce(l.likes, 0)::bigint AS likes, coalesce(l.collects, 0)::bigint AS collects
FROM newest n
CROSS JOIN q
LEFT JOIN LATERAL (
    SELECT sum(i.read_cnt) AS reads, sum(i.like_cnt) AS likes, sum(i.collect_cnt) AS collects
    FROM interactives i WHERE i.biz = 'article' AND i.biz_id = n.id
) l ON true
ORDER BY n.search_seq DESC;

-- name: ArticleSearchTexts :many
-- The text of one page's snippets: the description and the start of the body (repository.snippets
-- marks the matched words in Go: PostgreSQL's ts_headline parsed each hit's text again, about
-- 100 µs an article, the largest part of a rare word's search).
SELECT a.id, a.description, left(a.body, 20000)::text AS body
FROM articles a
WHERE a.id = ANY (@ids::bigint[]) AND a.status = 'published';

-- name: ArticleSearchLanguage :one
-- The configured text search configuration, checked at start: an unknown name is an error.
SELECT (@name::text)::regconfig::text AS name;

-- name: ArticleSearchBackfillLock :one
-- One instance of a fleet backfills at a time (its batch's transaction holds the lock).
SELECT pg_try_advisory_xact_lock(hashtextextended('inkwell:search-backfill', 0));

-- name: ArticleSearchBackfill :many
-- Published articles without a search document or a place in publication order (published before
-- migrations 00021 and 00024, or by an older instance during a rolling upgrade), oldest
-- publication first, a batch at a time off articles_search_unplaced_idx: their places follow
-- their publication dates.
WITH batch AS (
    SELECT m.id, m.published_at FROM articles m
    WHERE m.status = 'published' AND (m.search_vector IS NULL OR m.search_seq IS NULL)
    ORDER BY m.published_at, m.id
    LIMIT @lim::int
    FOR UPDATE SKIP LOCKED
), placed AS (
    SELECT p.id, nextval('articles_search_seq') AS seq
    FROM (SELECT b.id FROM batch b ORDER BY b.published_at, b.id) p
)
UPDATE articles a
SET search_vector = coalesce(a.search_vector, inkwell_search_document((@search_config::text)::regconfig, a.title, a.description, a.body)),
    search_seq    = coalesce(a.search_seq, placed.seq)
FROM placed
WHERE a.id = placed.id AND a.status = 'published'
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
