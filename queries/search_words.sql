-- name: SearchWordsCandidates :many
-- "Did you mean": candidate corrections of the words that are not in the lexicon (words in it get
-- trigram rows). Two sources, both bounded by the query, not the lexicon: per word, the @k most
-- similar lexicon words by trigrams (`%`, similarity ≥ pg_trgm.similarity_threshold, off the GIN,
-- nearest first); and which of @probes (the words themselves and their edit-distance-1 variants,
-- made by the caller) are lexicon words, by primary-key probes, with an empty query: for
-- misspellings too short or too scrambled for trigrams, and to tell which words are known. The
-- caller picks among the candidates by edit distance.
WITH q AS (
    SELECT DISTINCT w AS word FROM unnest(@words::text[]) AS w
), unknown AS (
    SELECT q.word FROM q WHERE NOT EXISTS (SELECT 1 FROM search_words e WHERE e.word = q.word)
)
SELECT u.word::text AS query, n.word, n.ndoc
FROM unknown u
CROSS JOIN LATERAL (
    SELECT s.word, s.ndoc
    FROM search_words s
    WHERE s.word % u.word
    ORDER BY s.word <-> u.word
    LIMIT @k::int
) n
UNION ALL
SELECT ''::text, s.word, s.ndoc
FROM search_words s
WHERE s.word = ANY (@probes::text[]);

-- name: SearchWordsFold :one
-- One batch of the lexicon pass: the next @batch articles after the watermark in id order (up to
-- @until), cut before the first one created at or after @settled_before (an article whose
-- transaction may still be open could hide an id below it, so the watermark never passes a recent
-- row); the words of the published ones, each counted once per article, added to the lexicon; the
-- watermark moved to the batch's last id. One statement, under the state row's lock, so a batch is
-- folded once. ts_stat counts the words inside one function call over the batch's vectors (about
-- five times faster than unnesting every vector into rows and grouping them).
WITH state AS (
    SELECT article_watermark AS wm FROM search_lexicon_state WHERE id FOR UPDATE
), candidates AS (
    -- The watermark as a scalar subquery: an index condition on the primary key. Joined with the
    -- state row instead, the planner walked the whole key from its start and filtered (2.4 s at a
    -- million articles, every minute, with nothing to fold).
    SELECT a.id, a.created_at
    FROM articles a
    WHERE a.id > (SELECT state.wm FROM state) AND a.id <= @until::bigint
    ORDER BY a.id
    LIMIT @batch::int
), cut AS (
    SELECT min(c.id) AS id FROM candidates c WHERE c.created_at >= @settled_before::timestamptz
), batch AS (
    SELECT c.id FROM candidates c, cut WHERE cut.id IS NULL OR c.id < cut.id
), bounds AS (
    SELECT state.wm AS lo, COALESCE(max(b.id), state.wm) AS hi, count(b.id) AS n
    FROM state LEFT JOIN batch b ON TRUE
    GROUP BY state.wm
), words AS (
    SELECT w.word, w.ndoc
    FROM bounds,
         ts_stat(format($q$SELECT to_tsvector('simple', left(title, 1000) || ' ' || left(description, 4000) || ' ' || left(body, 100000))
                            FROM articles WHERE id > %s AND id <= %s AND status = 'published'$q$, bounds.lo, bounds.hi)) AS w (word, ndoc, nentry)
    WHERE bounds.n > 0
      AND w.word ~ '^[[:alnum:]]{3,32}$'
      AND w.word !~ '^[0-9]+$'
      AND w.word !~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]'
), added AS (
    -- In word order, so folds running side by side (the seed's) cannot deadlock on the lexicon's rows.
    INSERT INTO search_words AS s (word, ndoc)
    SELECT word, ndoc FROM words ORDER BY word
    ON CONFLICT (word) DO UPDATE SET ndoc = s.ndoc + EXCLUDED.ndoc
    RETURNING 1
)
UPDATE search_lexicon_state st
SET article_watermark = bounds.hi,
    folded_at         = now()
FROM bounds
WHERE st.id
RETURNING bounds.n::int AS articles,
          (SELECT count(*) FROM added)::int AS words,
          st.article_watermark;

-- name: SearchWordsFoldRange :one
-- The words of the published articles with ids in (@after, @through], added to the lexicon
-- without looking at the watermark: the seed folds its own id range with several of these side by
-- side, under the pass's lock, and then moves the watermark over the range (SearchLexiconAdvance).
WITH words AS (
    SELECT w.word, w.ndoc
    FROM ts_stat(format($q$SELECT to_tsvector('simple', left(title, 1000) || ' ' || left(description, 4000) || ' ' || left(body, 100000))
                          FROM articles WHERE id > %s AND id <= %s AND status = 'published'$q$, @after::bigint, @through::bigint)) AS w (word, ndoc, nentry)
    WHERE w.word ~ '^[[:alnum:]]{3,32}$'
      AND w.word !~ '^[0-9]+$'
      AND w.word !~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]'
), added AS (
    INSERT INTO search_words AS s (word, ndoc)
    SELECT word, ndoc FROM words ORDER BY word
    ON CONFLICT (word) DO UPDATE SET ndoc = s.ndoc + EXCLUDED.ndoc
    RETURNING 1
)
SELECT count(*)::int FROM added;

-- name: SearchLexiconAdvance :execrows
-- Moves the watermark from @from_id to @to_id, only if it is still at @from_id.
UPDATE search_lexicon_state SET article_watermark = @to_id::bigint, folded_at = now()
WHERE id AND article_watermark = @from_id::bigint;

-- name: SearchLexiconTryLock :one
-- One lexicon pass at a time in the fleet: a session-level advisory lock (two-key form, class 1422,
-- a key space of its own) held by the connection that runs the pass, and freed with it if it breaks.
SELECT pg_try_advisory_lock(1422, 1);

-- name: SearchLexiconLock :exec
SELECT pg_advisory_lock(1422, 1);

-- name: SearchLexiconUnlock :one
SELECT pg_advisory_unlock(1422, 1);

-- name: SearchLexiconUnfoldedBefore :one
-- The first article after the watermark @after and before @before, 0 if none: whether a pass
-- stopped short of @before.
SELECT COALESCE(min(id), 0)::bigint FROM articles WHERE id > @after::bigint AND id < @before::bigint;

-- name: SearchLexiconWatermark :one
SELECT article_watermark FROM search_lexicon_state WHERE id;

-- name: SearchWordsAdd :one
-- Words counted by the caller (the seed, which wrote the articles): words[i] occurs in ndocs[i]
-- of the range's articles. In word order, as every fold, so folds side by side cannot deadlock.
WITH added AS (
    INSERT INTO search_words AS s (word, ndoc)
    SELECT w.word, (@ndocs::bigint[])[w.i] FROM unnest(@words::text[]) WITH ORDINALITY AS w(word, i)
    ORDER BY w.word
    ON CONFLICT (word) DO UPDATE SET ndoc = s.ndoc + EXCLUDED.ndoc
    RETURNING 1
)
SELECT count(*)::int FROM added;
