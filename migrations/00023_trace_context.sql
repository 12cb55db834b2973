-- +goose Up
-- The W3C traceparent of the span that wrote an outbox event or enqueued a job (issue #18), so the
-- relay's publish, the consumer's work and the job's run join the trace of the request that caused
-- them. NULL when tracing was off. Nullable without a default: no table rewrite, no scan.
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS traceparent TEXT;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS traceparent TEXT;

-- +goose Down
ALTER TABLE jobs DROP COLUMN IF EXISTS traceparent;
ALTER TABLE outbox DROP COLUMN IF EXISTS traceparent;
