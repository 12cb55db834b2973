-- Issue #33, webhook throughput: the common attempt (the receiver answered 2xx) is recorded in
-- one call, autocommitted, instead of a unit of work of seven round trips (BEGIN, lock the
-- endpoint, record, find the endpoint's next delivery, enqueue its job, notify, COMMIT). On a
-- 2-core machine those round trips were most of PostgreSQL's CPU per delivery, and PostgreSQL's
-- CPU was the limit (BENCHMARKS.md, "Realtime").
--
-- The order of the steps is the unit of work's, and so is its guarantee: the endpoint's row is
-- locked first, as webhook_emit locks it to number a delivery, and every later statement of a
-- PL/pgSQL function takes a new snapshot, so the search for the next pending delivery sees every
-- delivery committed before the lock was ours (a single statement would see only those committed
-- before it began, and could miss the next delivery's job). A failed attempt still takes the
-- repository's unit of work (failing time, disabling, the owner's notice).
--
-- No NOTIFY for the next delivery's job: PostgreSQL serializes the commits of transactions that
-- notify (one lock held through the commit's WAL flush), and with a NOTIFY per delivery the
-- deliveries queued on that lock. The runner that ran this attempt claims the next job with its
-- ack (job.Runner: an ack claims too); other instances find it at their poll.
--
-- Returns the delivery's status after the attempt; NULL when the delivery or its endpoint is gone.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhook_record_success(p_delivery bigint, p_webhook bigint, p_status_code int, p_latency_ms int,
                                                  p_response text, p_max_attempts int, p_traceparent text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_failing timestamptz;
    v_status text;
    v_head bigint;
BEGIN
    SELECT failing_since INTO v_failing FROM webhooks WHERE id = p_webhook FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF v_failing IS NOT NULL THEN
        UPDATE webhooks SET failing_since = NULL WHERE id = p_webhook;
    END IF;
    WITH d AS (
        UPDATE webhook_deliveries
        SET attempts = attempts + 1, status = CASE WHEN status = 'pending' THEN 'delivered' ELSE status END,
            status_code = p_status_code, latency_ms = p_latency_ms, response = p_response, error = '', attempted_at = now()
        WHERE id = p_delivery AND webhook_id = p_webhook
        RETURNING id, attempts, status, status_code, latency_ms, response, error
    ), attempt AS (
        INSERT INTO webhook_attempts (delivery_id, attempt, status_code, latency_ms, response, error)
        SELECT id, attempts, status_code, latency_ms, response, error FROM d
    )
    SELECT status INTO v_status FROM d;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF v_status <> 'pending' THEN
        SELECT id INTO v_head FROM webhook_deliveries
        WHERE webhook_id = p_webhook AND status = 'pending'
        ORDER BY seq
        LIMIT 1;
        IF FOUND THEN
            INSERT INTO jobs (queue, kind, payload, max_attempts, unique_key, traceparent)
            VALUES ('webhooks', 'webhook_deliver', json_build_object('delivery', v_head)::jsonb, p_max_attempts,
                    'delivery:' || v_head, NULLIF(p_traceparent, ''))
            ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL DO NOTHING;
        END IF;
    END IF;
    RETURN v_status;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION IF EXISTS webhook_record_success(bigint, bigint, int, int, text, int, text);
