-- +goose Up
-- Every change of a counter row moves its version, in the same statement that changes the counts
-- and under the row's lock, so versions follow commit order. The Redis copy of a row keeps the
-- version it holds, and a write of an older version is refused (cache/lua/counters_store.lua):
-- that is what keeps the copy from going back in time, whichever instance writes it.
ALTER TABLE interactives ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE interactives DROP COLUMN version;
