-- +goose Up
-- An item's counters are spread over several rows (shards), so that concurrent likes of one hot
-- item lock different rows instead of queueing on one: a like changes one shard chosen at random
-- (repository/interactive.go), a read sums the item's shards. Read counts (the batched read-event
-- apply) and collects stay on shard 0, where every existing row already is. A shard's count may be
-- negative (a like on one shard, its unlike on another); the sum over the shards is exact.
-- Each shard keeps its own version, moved under that shard's lock: the Redis copy stores every
-- shard by its version (cache/lua/counters_store.lua).
ALTER TABLE interactives ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE interactives DROP CONSTRAINT interactives_biz_key;
ALTER TABLE interactives ADD CONSTRAINT interactives_biz_shard_key UNIQUE (biz, biz_id, shard);

-- +goose Down
-- Folds every item's shards back into one row (versions summed, so they still only grow).
CREATE TEMPORARY TABLE interactives_folded ON COMMIT DROP AS
SELECT biz, biz_id, sum(read_cnt)::bigint AS read_cnt, GREATEST(sum(like_cnt), 0)::bigint AS like_cnt,
       sum(collect_cnt)::bigint AS collect_cnt, max(updated_at) AS updated_at, sum(version)::bigint AS version
FROM interactives GROUP BY biz, biz_id;
DELETE FROM interactives;
ALTER TABLE interactives DROP CONSTRAINT interactives_biz_shard_key;
ALTER TABLE interactives DROP COLUMN shard;
INSERT INTO interactives (biz, biz_id, read_cnt, like_cnt, collect_cnt, updated_at, version)
SELECT biz, biz_id, read_cnt, like_cnt, collect_cnt, updated_at, version FROM interactives_folded;
ALTER TABLE interactives ADD CONSTRAINT interactives_biz_key UNIQUE (biz, biz_id);
