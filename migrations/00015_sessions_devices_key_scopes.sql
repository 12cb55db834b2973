-- +goose Up
-- Sessions are listed to their owner: the client that opened each one (its User-Agent, cut to
-- 256 characters) and when it was last refreshed (written on refresh only, so requests cost no
-- write).
ALTER TABLE sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN last_used_at TIMESTAMPTZ;
-- Listing a user's sessions and revoking them all reads the live ones by user.
CREATE INDEX sessions_user_live_idx ON sessions (user_id, created_at DESC) WHERE revoked_at IS NULL;

-- An API key's scopes: read (GET only) and/or write. No scope allows account management.
ALTER TABLE api_keys ADD COLUMN scopes TEXT[] NOT NULL DEFAULT '{write}'
    CONSTRAINT api_keys_scopes_check CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'write']::text[]);

-- +goose Down
ALTER TABLE api_keys DROP COLUMN scopes;
DROP INDEX sessions_user_live_idx;
ALTER TABLE sessions DROP COLUMN last_used_at;
ALTER TABLE sessions DROP COLUMN user_agent;
