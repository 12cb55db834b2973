-- +goose Up
-- Durable background work. A worker claims ready jobs with FOR UPDATE SKIP LOCKED and holds each
-- under a lease; lease_generation is bumped at every claim and fences every later write: an ack,
-- failure or renewal from a worker whose lease was taken over matches no row.
CREATE TABLE jobs (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue            TEXT        NOT NULL,
    kind             TEXT        NOT NULL,
    payload          JSONB       NOT NULL DEFAULT '{}',
    status           TEXT        NOT NULL DEFAULT 'ready',
    priority         INTEGER     NOT NULL DEFAULT 0,
    available_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_owner      TEXT,
    lease_until      TIMESTAMPTZ,
    lease_generation BIGINT      NOT NULL DEFAULT 0,
    attempts         INTEGER     NOT NULL DEFAULT 0,
    max_attempts     INTEGER     NOT NULL DEFAULT 5,
    last_error       TEXT,
    unique_key       TEXT,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at      TIMESTAMPTZ,
    CONSTRAINT jobs_status_check CHECK (status IN ('ready', 'running', 'done', 'dead')),
    CONSTRAINT jobs_attempts_check CHECK (max_attempts >= 1)
);
-- The claim query's path: ready jobs of a queue, best priority, oldest first.
CREATE INDEX jobs_ready_idx ON jobs (queue, priority DESC, available_at, id) WHERE status = 'ready';
-- The reaper's path: running jobs by lease expiry.
CREATE INDEX jobs_running_lease_idx ON jobs (lease_until) WHERE status = 'running';
-- Operators list dead jobs first.
CREATE INDEX jobs_dead_idx ON jobs (queue, updated_at DESC) WHERE status = 'dead';
-- Enqueueing the same unique job twice is a no-op.
CREATE UNIQUE INDEX jobs_queue_unique_key ON jobs (queue, unique_key) WHERE unique_key IS NOT NULL;

-- Transactional outbox: events written in the same transaction as the change they describe, then
-- relayed to a Redis stream (at least once) by a relay that claims them under a fenced lease.
CREATE TABLE outbox (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic            TEXT        NOT NULL,
    aggregate_id     BIGINT      NOT NULL,
    payload          JSONB       NOT NULL DEFAULT '{}',
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    published_at     TIMESTAMPTZ,
    lease_owner      TEXT,
    lease_until      TIMESTAMPTZ,
    lease_generation BIGINT      NOT NULL DEFAULT 0
);
CREATE INDEX outbox_pending_idx ON outbox (id) WHERE published_at IS NULL;

CREATE TABLE notifications (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT        NOT NULL,
    actor_id   BIGINT      REFERENCES users (id) ON DELETE CASCADE,
    article_id BIGINT      REFERENCES articles (id) ON DELETE CASCADE,
    event_id   TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    read_at    TIMESTAMPTZ,
    CONSTRAINT notifications_user_event_key UNIQUE (user_id, event_id)
);
CREATE INDEX notifications_recent_idx ON notifications (user_id, created_at DESC, id DESC);

-- One-time code login may identify a user by phone number.
ALTER TABLE users ADD COLUMN phone TEXT;
CREATE UNIQUE INDEX users_phone_key ON users (phone) WHERE phone IS NOT NULL;

-- +goose Down
DROP INDEX users_phone_key;
ALTER TABLE users DROP COLUMN phone;
DROP TABLE notifications;
DROP TABLE outbox;
DROP TABLE jobs;
