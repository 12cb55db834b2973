-- +goose NO TRANSACTION
-- +goose Up
-- Issue #33, the deliveries page shows each attempt, not only the last: one row per attempt of a
-- delivery (repository/webhooks, Store.Record writes it in the attempt's unit of work). A delivery
-- has at most domain.WebhookRetry.MaxAttempts (16) of them (a redelivery is a new delivery); the
-- primary key serves the page's one query for its deliveries' attempts (delivery_id = ANY(ids))
-- and the cascade of a delivery's delete.
CREATE TABLE IF NOT EXISTS webhook_attempts (
    delivery_id BIGINT      NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    -- 1 for the first attempt.
    attempt     INT         NOT NULL,
    -- The answer's status code (NULL: none: refused, timed out), latency, the first 1 KB of the
    -- answer, the error.
    status_code INT,
    latency_ms  INT         NOT NULL,
    response    TEXT        NOT NULL DEFAULT '',
    error       TEXT        NOT NULL DEFAULT '',
    at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (delivery_id, attempt)
);

-- Retention (repository/retention.go, RetentionWebhookDeliveries): finished deliveries (delivered
-- or dead) older than 30 days go, oldest first, in bounded batches walking this index; pending
-- ones are never in it. Built CONCURRENTLY, dropped first, so a failed run is simply run again.
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_done_idx;
CREATE INDEX CONCURRENTLY webhook_deliveries_done_idx ON webhook_deliveries (created_at) WHERE status <> 'pending';

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_done_idx;
DROP TABLE IF EXISTS webhook_attempts;
