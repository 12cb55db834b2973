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
-- One batch of the lexicon pass: the next @batch articles after the watermark in id order, cut
-- before the first one created at or after @settled_before (an article whose transaction may still
-- be open could hide an id below it, so the watermark never passes a recent row); the words of the
-- published ones counted once per article and added to the lexicon; the watermark moved to the
-- batch's last id. All in one statement, under the state row's lock, so a batch is folded once.
WITH state AS (
    SELECT article_watermark FROM search_lexicon_state WHERE id FOR UPDATE
), candidates AS (
    SELECT a.id, a.status, a.created_at, a.title, a.description, a.body
    FROM articles a, state
    WHERE a.id > state.article_watermark
    ORDER BY a.id
    LIMIT @batch::int
), cut AS (
    SELECT min(c.id) AS id FROM candidates c WHERE c.created_at >= @settled_before::timestamptz
), batch AS (
    SELECT c.* FROM candidates c, cut WHERE cut.id IS NULL OR c.id < cut.id
), words AS (
    SELECT w.lexeme AS word, count(*)::bigint AS ndoc
    FROM batch b,
         unnest(to_tsvector('simple', left(b.title, 1000) || ' ' || left(b.description, 4000) || ' ' || left(b.body, 100000))) AS w (lexeme, positions, weights)
    WHERE b.status = 'published'
      AND w.lexeme ~ '^[[:alnum:]]{3,32}$'
      AND w.lexeme !~ '^[0-9]+$'
      AND w.lexeme !~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]'
    GROUP BY w.lexeme
), added AS (
    -- In word order, so two folds (a seed and a pass) cannot deadlock on the lexicon's rows.
    INSERT INTO search_words AS s (word, ndoc)
    SELECT word, ndoc FROM words ORDER BY word
    ON CONFLICT (word) DO UPDATE SET ndoc = s.ndoc + EXCLUDED.ndoc
    RETURNING 1
)
UPDATE search_lexicon_state st
SET article_watermark = COALESCE((SELECT max(b.id) FROM batch b), st.article_watermark),
    folded_at         = now()
WHERE st.id
RETURNING (SELECT count(*) FROM batch)::int AS articles,
          (SELECT count(*) FROM candidates)::int AS candidates,
          (SELECT count(*) FROM added)::int AS words,
          st.article_watermark;

-- name: SearchLexiconTryLock :one
-- One lexicon pass at a time in the fleet: a session-level advisory lock (two-key form, class 1422,
-- a key space of its own) held by the connection that runs the pass, and freed with it if it breaks.
SELECT pg_try_advisory_lock(1422, 1);

-- name: SearchLexiconLock :exec
SELECT pg_advisory_lock(1422, 1);

-- name: SearchLexiconUnlock :one
SELECT pg_advisory_unlock(1422, 1);
