-- +goose NO TRANSACTION
-- Issue #29, uploads: object keys whose last upload row went (a user's delete, retention), and the
-- index the retention of unreferenced uploads walks. An object leaves the media store only from
-- the retention pass, for an orphaned key that no upload row uses any more (docs/ARCHITECTURE.md,
-- "Uploads: who deletes an object").

-- Without a transaction, so the indexes on uploads are built CONCURRENTLY; every statement is
-- idempotent, so a failed run is simply run again.

-- +goose Up
CREATE TABLE IF NOT EXISTS upload_orphans (
    object_key  TEXT PRIMARY KEY,
    orphaned_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS upload_orphans_since_idx ON upload_orphans (orphaned_at);

-- Retention: uploads last referred to (or, never referred to, made) longest ago first.
CREATE INDEX CONCURRENTLY IF NOT EXISTS uploads_unreferenced_idx ON uploads ((coalesce(referenced_at, created_at)));

-- Every derived size's key, so "does any upload use this key" is two index probes.
ALTER TABLE uploads ADD COLUMN IF NOT EXISTS variant_keys TEXT[] NOT NULL DEFAULT '{}';
CREATE INDEX CONCURRENTLY IF NOT EXISTS uploads_variant_keys_idx ON uploads USING gin (variant_keys);

-- +goose Down
ALTER TABLE uploads DROP COLUMN IF EXISTS variant_keys;
DROP INDEX IF EXISTS uploads_unreferenced_idx;
DROP TABLE IF EXISTS upload_orphans;
