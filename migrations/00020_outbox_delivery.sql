-- +goose NO TRANSACTION
-- +goose Up
-- The outbox row is the truth of an event until its consumer applied it (issue #16): rows stay
-- after publishing, the consumer marks applied_at in the transaction that applies the event, and
-- the relay re-drives a row published longer ago than the redelivery window and still unapplied
-- (a Redis that restarted empty lost it). Each re-drive is an attempt; after the last one the row
-- is dead, for an operator (`inkwell outbox`).
--
-- status: pending (to be published, once next_attempt_at has come) → published → applied, or
-- dead. Rows that exist before this migration were published under the old rules (published meant
-- done), so the column is added with 'applied' for them — a stored default, no table rewrite — and
-- the default becomes 'pending' for new rows; the unpublished ones are set back to pending below.
-- Each statement commits on its own (NO TRANSACTION, for the CONCURRENTLY builds), so every step is
-- written to be safe to repeat.
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS status TEXT NOT NULL DEFAULT 'applied';
ALTER TABLE outbox ALTER COLUMN status SET DEFAULT 'pending';
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS applied_at TIMESTAMPTZ;
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS last_error TEXT;
-- NOT VALID, then VALIDATE: the check does not scan the table under the ALTER's exclusive lock.
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_status_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_status_check CHECK (status IN ('pending', 'published', 'applied', 'dead')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_status_check;
-- Walks outbox_pending_idx (the old rules' unpublished rows): only those few rows change.
UPDATE outbox SET status = 'pending' WHERE published_at IS NULL AND status = 'applied';

-- The claim's path: pending rows, oldest first (OutboxClaim; also the backlog and its age).
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_ready_idx ON outbox (id) WHERE status = 'pending';
-- The re-drive's path: published rows by when they were published (OutboxRedrive; the age of the
-- oldest unapplied event).
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_published_idx ON outbox (published_at, id) WHERE status = 'published';
-- Dead rows for the operator and the dead gauge.
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_dead_idx ON outbox (id) WHERE status = 'dead';
-- The retention job's path: applied rows, oldest first (OutboxPruneAppliedBatch).
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_applied_idx ON outbox (created_at, id) WHERE status = 'applied';
-- Replaced by outbox_ready_idx (the claim no longer asks for published_at IS NULL).
DROP INDEX CONCURRENTLY IF EXISTS outbox_pending_idx;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_pending_idx ON outbox (id) WHERE published_at IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS outbox_applied_idx;
DROP INDEX CONCURRENTLY IF EXISTS outbox_dead_idx;
DROP INDEX CONCURRENTLY IF EXISTS outbox_published_idx;
DROP INDEX CONCURRENTLY IF EXISTS outbox_ready_idx;
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_status_check;
ALTER TABLE outbox DROP COLUMN IF EXISTS last_error;
ALTER TABLE outbox DROP COLUMN IF EXISTS applied_at;
ALTER TABLE outbox DROP COLUMN IF EXISTS next_attempt_at;
ALTER TABLE outbox DROP COLUMN IF EXISTS attempts;
ALTER TABLE outbox DROP COLUMN IF EXISTS status;
