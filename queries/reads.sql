-- name: ReadEventsApply :many
-- Applies one batch of read events in one statement (and so one transaction): records the event
-- ids in the inbox, keeps only those not seen before, and adds their per-article counts to the
-- counters. Returns the increments applied, for the Redis mirror. An event is (id, article, reads):
-- a single read is one row with reads 1; an aggregated batch of anonymous reads is one row per
-- article, all under the batch's one id, so the inbox dedupes the whole batch at once.
WITH batch AS (
    -- Unnests in one select list advance together (zip), pairing ids with articles and reads. An
    -- (id, article) can come twice in one batch (a retried XADD pipeline writes its events
    -- again): it counts once.
    SELECT DISTINCT ON (z.event_id, z.article_id) z.event_id, z.article_id, z.reads
    FROM (SELECT unnest(@event_ids::text[]) AS event_id, unnest(@article_ids::bigint[]) AS article_id,
                 unnest(@reads::bigint[]) AS reads) z
    ORDER BY z.event_id, z.article_id
),
fresh AS (
    -- In id order, so two batches sharing ids (a reclaim racing the consumer it took over from)
    -- wait on each other instead of deadlocking.
    INSERT INTO inbox (consumer, event_id)
    SELECT DISTINCT @consumer::text, b.event_id FROM batch b
    ORDER BY 2
    ON CONFLICT DO NOTHING
    RETURNING event_id
),
sums AS (
    SELECT b.article_id, sum(b.reads)::bigint AS reads
    FROM batch b JOIN fresh f ON f.event_id = b.event_id
    JOIN articles a ON a.id = b.article_id
    GROUP BY b.article_id
),
applied AS (
    -- Counter rows are locked in article order: concurrent batches over the same articles then
    -- queue on the first row they share instead of deadlocking (hash aggregation's order differs
    -- from batch to batch).
    INSERT INTO interactives (biz, biz_id, read_cnt, version)
    SELECT 'article', s.article_id, s.reads, 1 FROM sums s
    ORDER BY s.article_id
    ON CONFLICT (biz, biz_id, shard) DO UPDATE -- read counts live on shard 0 (the column's default)
    SET read_cnt = interactives.read_cnt + EXCLUDED.read_cnt, version = interactives.version + 1, updated_at = now()
    RETURNING biz_id, read_cnt, like_cnt, collect_cnt, version
)
-- Per article: the reads this batch added, and the whole row as it leaves it (for the cache).
SELECT s.article_id::bigint AS article_id, s.reads::bigint AS reads,
       a.read_cnt, a.like_cnt, a.collect_cnt, a.version
FROM sums s JOIN applied a ON a.biz_id = s.article_id;

-- name: ReadHistoryApply :exec
-- Upserts (user, article, last read at) for a batch; replaying a batch changes nothing because
-- the newest timestamp wins.
WITH h AS (
    SELECT unnest(@user_ids::bigint[]) AS user_id, unnest(@article_ids::bigint[]) AS article_id,
           unnest(@read_ats::timestamptz[]) AS read_at
)
INSERT INTO reading_history (user_id, article_id, last_read_at)
SELECT DISTINCT ON (h.user_id, h.article_id) h.user_id, h.article_id, h.read_at
FROM h
JOIN articles a ON a.id = h.article_id
JOIN users u ON u.id = h.user_id
ORDER BY h.user_id, h.article_id, h.read_at DESC
ON CONFLICT (user_id, article_id) DO UPDATE
SET last_read_at = GREATEST(reading_history.last_read_at, EXCLUDED.last_read_at);

-- name: ReadHistoryList :many
SELECT h.article_id, h.last_read_at
FROM reading_history h
WHERE h.user_id = @user_id::bigint
  AND (h.last_read_at, h.article_id) < (@before_read_at::timestamptz, @before_article_id::bigint)
ORDER BY h.last_read_at DESC, h.article_id DESC
LIMIT @lim::int;
