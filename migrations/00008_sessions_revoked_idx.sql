-- +goose Up
-- Rebuilding the Redis revocation cache reads the sessions revoked in the last access-token
-- lifetime; only revoked sessions are indexed.
CREATE INDEX sessions_revoked_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;

-- +goose Down
DROP INDEX sessions_revoked_idx;
