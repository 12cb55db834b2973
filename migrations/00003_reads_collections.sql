-- +goose Up
-- Event ids a consumer has already applied. Recording an id in the same transaction as the
-- effect makes redelivered events (a crash between commit and XACK) change nothing.
CREATE TABLE inbox (
    consumer    TEXT        NOT NULL,
    event_id    TEXT        NOT NULL,
    received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
);
CREATE INDEX inbox_received_idx ON inbox (received_at);

-- Each signed-in reader's history: one row per (user, article), the last read wins.
CREATE TABLE reading_history (
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    article_id   BIGINT      NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    last_read_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, article_id)
);
CREATE INDEX reading_history_recent_idx ON reading_history (user_id, last_read_at DESC, article_id DESC);

CREATE TABLE collections (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name        TEXT        NOT NULL,
    description TEXT        NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX collections_owner_name_key ON collections (owner_id, lower(name));

CREATE TABLE collection_items (
    collection_id BIGINT      NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    article_id    BIGINT      NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (collection_id, article_id)
);
-- A folder's articles, newest first (keyset over (created_at, article_id)).
CREATE INDEX collection_items_recent_idx ON collection_items (collection_id, created_at DESC, article_id DESC);
-- "Has the viewer collected these articles?"
CREATE INDEX collection_items_article_idx ON collection_items (article_id);

-- +goose Down
DROP TABLE collection_items;
DROP TABLE collections;
DROP TABLE reading_history;
DROP TABLE inbox;
