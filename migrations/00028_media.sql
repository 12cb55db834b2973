-- Issue #29: media. An upload is one user's image: its re-encoded original and derived sizes are
-- objects in the media store (a local directory or S3-compatible storage), named by the sha256 of
-- their bytes, so the same image uploaded twice is stored once; the rows say who uploaded what.

-- +goose Up
CREATE TABLE uploads (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id       BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The stored original's object key: "<sha256 hex>.<ext>".
    object_key    TEXT        NOT NULL,
    content_type  TEXT        NOT NULL,
    width         INTEGER     NOT NULL,
    height        INTEGER     NOT NULL,
    bytes         BIGINT      NOT NULL,
    sha256        TEXT        NOT NULL,
    -- Derived sizes, by name: {"avatar": {"key", "width", "height", "bytes"}, ...}.
    variants      JSONB       NOT NULL DEFAULT '{}',
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- When something (an avatar, an article's cover or body) last referred to it; NULL: never.
    referenced_at TIMESTAMPTZ
);
-- GET /api/user/uploads: a user's uploads, newest first.
CREATE INDEX uploads_user_recent_idx ON uploads (user_id, created_at DESC, id DESC);
-- Is an object still used by any upload (before the store's copy may go)?
CREATE INDEX uploads_object_key_idx ON uploads (object_key);

-- What refers to an upload now: a user's avatar, an article's cover or body. Written with the
-- referring row; an upload no row refers to for 7 days is deleted by retention.
CREATE TABLE upload_references (
    owner_kind TEXT   NOT NULL CHECK (owner_kind IN ('avatar', 'article')),
    owner_id   BIGINT NOT NULL,
    upload_id  BIGINT NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
    PRIMARY KEY (owner_kind, owner_id, upload_id)
);
CREATE INDEX upload_references_upload_idx ON upload_references (upload_id);

-- A user's stored bytes in all (the total quota), kept with every upload and delete.
CREATE TABLE upload_totals (
    user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    bytes   BIGINT NOT NULL DEFAULT 0
);

ALTER TABLE articles ADD COLUMN cover_image TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE articles DROP COLUMN cover_image;
DROP TABLE upload_totals;
DROP TABLE upload_references;
DROP TABLE uploads;
