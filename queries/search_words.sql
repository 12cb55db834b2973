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

-- name: SearchLexiconChangesBatch :many
-- The articles of the @lim oldest lexicon changes, with every change of theirs, in order: a pass
-- settles an article's changes together (an added text and the removal of that text cancel). Off
-- the primary key and the article index: an empty log costs one index probe, however many
-- articles there are.
-- LATERAL, so each article's changes are an index range even when the log is long (a user's
-- deletion logs all their articles at once): a join was planned as a scan of the whole log.
WITH picked AS (
    SELECT DISTINCT p.article_id FROM (
        SELECT c.article_id FROM search_lexicon_changes c ORDER BY c.id LIMIT @lim::int
    ) p
)
SELECT c.id, c.article_id, c.removed
FROM picked
CROSS JOIN LATERAL (
    SELECT l.id, l.article_id, l.removed
    FROM search_lexicon_changes l
    WHERE l.article_id = picked.article_id
    ORDER BY l.id
) c
ORDER BY c.article_id, c.id;

-- name: SearchWordsApplyChanges :one
-- Moves the lexicon by the words of the @added articles (as they are now, if still published:
-- counted once per article, like every fold) minus the words of the @removed changes' texts.
-- Words whose count reaches zero are returned, for SearchWordsDropEmptied (a statement cannot
-- update and delete the same row). ts_stat counts the words inside one function call over the
-- texts' vectors (about five times faster than unnesting every vector into rows and grouping).
WITH texts AS (
    SELECT s.word, s.ndoc AS n
    FROM ts_stat(format($q$SELECT to_tsvector('simple', left(title, 1000) || ' ' || left(description, 4000) || ' ' || left(body, 100000))
                          FROM articles WHERE id = ANY (%L::bigint[]) AND status = 'published'$q$, @added::bigint[])) AS s (word, ndoc, nentry)
    UNION ALL
    SELECT s.word, -s.ndoc
    FROM ts_stat(format($q$SELECT to_tsvector('simple', left(title, 1000) || ' ' || left(description, 4000) || ' ' || left(body, 100000))
                          FROM search_lexicon_changes WHERE id = ANY (%L::bigint[]) AND removed$q$, @removed::bigint[])) AS s (word, ndoc, nentry)
), delta AS (
    SELECT t.word, sum(t.n)::bigint AS n
    FROM texts t
    WHERE t.word ~ '^[[:alnum:]]{3,32}$'
      AND t.word !~ '^[0-9]+$'
      AND t.word !~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]'
    GROUP BY t.word
    HAVING sum(t.n) <> 0
), applied AS (
    -- In word order, so folds running side by side (the seed's) cannot deadlock on the lexicon's rows.
    INSERT INTO search_words AS s (word, ndoc)
    SELECT d.word, d.n FROM delta d ORDER BY d.word
    ON CONFLICT (word) DO UPDATE SET ndoc = s.ndoc + EXCLUDED.ndoc
    RETURNING s.word, s.ndoc
)
SELECT count(*)::int AS words,
       coalesce(array_agg(a.word) FILTER (WHERE a.ndoc <= 0), '{}')::text[] AS emptied
FROM applied a;

-- name: SearchWordsDropEmptied :exec
-- Words no counted article holds any more are no longer suggested. A count below zero is a text
-- counted before the lexicon followed changes (migration 00026) that the old pass never added.
DELETE FROM search_words WHERE word = ANY (@words::text[]) AND ndoc <= 0;

-- name: SearchLexiconChangesDelete :exec
DELETE FROM search_lexicon_changes WHERE id = ANY (@ids::bigint[]);

-- name: SearchLexiconTryLock :one
-- One lexicon pass at a time in the fleet: a session-level advisory lock (two-key form, class 1422,
-- a key space of its own) held by the connection that runs the pass, and freed with it if it breaks.
SELECT pg_try_advisory_lock(1422, 1);

-- name: SearchLexiconLock :exec
SELECT pg_advisory_lock(1422, 1);

-- name: SearchLexiconUnlock :one
SELECT pg_advisory_unlock(1422, 1);

-- name: SearchWordsAdd :one
-- Words counted by the caller (the seed, which wrote the articles with
-- inkwell.lexicon_insert_counted on, so no change rows): words[i] occurs in ndocs[i] of them. In
-- word order, as every fold, so folds side by side cannot deadlock.
WITH added AS (
    INSERT INTO search_words AS s (word, ndoc)
    SELECT w.word, (@ndocs::bigint[])[w.i] FROM unnest(@words::text[]) WITH ORDINALITY AS w(word, i)
    ORDER BY w.word
    ON CONFLICT (word) DO UPDATE SET ndoc = s.ndoc + EXCLUDED.ndoc
    RETURNING 1
)
SELECT count(*)::int FROM added;
