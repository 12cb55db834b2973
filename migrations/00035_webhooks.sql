-- Issue #33, webhooks: endpoints users (and admins, site-wide: owner_id NULL) register for events,
-- and the deliveries of those events to them (repository/webhooks). A delivery is numbered per
-- endpoint (seq, from webhooks.next_seq under the endpoint's row lock): only the lowest pending
-- delivery of an endpoint has a queue job, and finishing it (delivered or dead) enqueues the next,
-- so an endpoint receives its events in order. The signing secret is stored encrypted
-- (AES-GCM, INKWELL_WEBHOOK_KEY), never in plain text.

-- +goose Up
CREATE TABLE IF NOT EXISTS webhooks (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- NULL: a site-wide endpoint (admins), told of every public event.
    owner_id      BIGINT REFERENCES users (id) ON DELETE CASCADE,
    url           TEXT        NOT NULL,
    events        TEXT[]      NOT NULL,
    secret_enc    BYTEA       NOT NULL,
    active        BOOLEAN     NOT NULL DEFAULT true,
    -- When the endpoint started failing (the first failed attempt since its last success); an
    -- endpoint failing for 3 days is disabled.
    failing_since TIMESTAMPTZ,
    next_seq      BIGINT      NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- A user's endpoints (the list, the cap), and the fan-out's lookup by owner.
CREATE INDEX IF NOT EXISTS webhooks_owner_idx ON webhooks (owner_id, id);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id  BIGINT      NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    seq         BIGINT      NOT NULL,
    -- The event delivered: the outbox event's id (fan-out is idempotent on it), or ping-/redeliver- ids.
    event_id    TEXT        NOT NULL,
    event_type  TEXT        NOT NULL,
    -- The exact bytes signed and sent.
    body        TEXT        NOT NULL,
    status      TEXT        NOT NULL DEFAULT 'pending',
    attempts    INT         NOT NULL DEFAULT 0,
    -- The last attempt: the answer's status code (NULL: none), latency, the first 1 KB of the answer, the error.
    status_code INT,
    latency_ms  INT,
    response    TEXT        NOT NULL DEFAULT '',
    error       TEXT        NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    attempted_at TIMESTAMPTZ,
    CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'delivered', 'dead')),
    CONSTRAINT webhook_deliveries_event_key UNIQUE (webhook_id, event_id),
    CONSTRAINT webhook_deliveries_seq_key UNIQUE (webhook_id, seq)
);
-- The head of an endpoint's line: its lowest pending delivery.
CREATE INDEX IF NOT EXISTS webhook_deliveries_pending_idx ON webhook_deliveries (webhook_id, seq) WHERE status = 'pending';
-- The deliveries page (newest first) walks webhook_deliveries_seq_key backwards.

-- +goose Down
DROP TABLE IF EXISTS webhook_deliveries;
DROP TABLE IF EXISTS webhooks;
