-- +goose NO TRANSACTION
-- +goose Up
-- The indexes the retention job's batch deletes walk (queries/retention.sql, job/retention.go):
-- each batch reads at most its batch size of the oldest prunable rows off one of them, so its
-- cost does not depend on the table's size. Built CONCURRENTLY (no write is blocked while they
-- build), hence outside a transaction; each is dropped first, so a migration that failed half way
-- (leaving an INVALID index behind) runs again cleanly.

-- Done and dead jobs, by the time they finished (both set finished_at).
DROP INDEX CONCURRENTLY IF EXISTS jobs_finished_idx;
CREATE INDEX CONCURRENTLY jobs_finished_idx ON jobs (status, finished_at) WHERE status IN ('done', 'dead');

-- Notifications by age (notifications_recent_idx leads with the user).
DROP INDEX CONCURRENTLY IF EXISTS notifications_created_idx;
CREATE INDEX CONCURRENTLY notifications_created_idx ON notifications (created_at);

-- Live sessions by their last use (a refresh, else the login): one unused for longer than the
-- refresh-token lifetime cannot be refreshed any more.
DROP INDEX CONCURRENTLY IF EXISTS sessions_last_use_idx;
CREATE INDEX CONCURRENTLY sessions_last_use_idx ON sessions ((COALESCE(last_used_at, created_at))) WHERE revoked_at IS NULL;

-- Refresh tokens by expiry.
DROP INDEX CONCURRENTLY IF EXISTS refresh_tokens_expires_idx;
CREATE INDEX CONCURRENTLY refresh_tokens_expires_idx ON refresh_tokens (expires_at);

-- Reading history by the time of the read: the users who read lately are the only ones whose
-- history can have grown past its cap since the last run.
DROP INDEX CONCURRENTLY IF EXISTS reading_history_read_at_idx;
CREATE INDEX CONCURRENTLY reading_history_read_at_idx ON reading_history (last_read_at);

-- The code tables by expiry.
DROP INDEX CONCURRENTLY IF EXISTS login_codes_expires_idx;
CREATE INDEX CONCURRENTLY login_codes_expires_idx ON login_codes (expires_at);
DROP INDEX CONCURRENTLY IF EXISTS login_code_meters_window_idx;
CREATE INDEX CONCURRENTLY login_code_meters_window_idx ON login_code_meters (window_ends);
DROP INDEX CONCURRENTLY IF EXISTS account_codes_expires_idx;
CREATE INDEX CONCURRENTLY account_codes_expires_idx ON account_codes (expires_at);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS account_codes_expires_idx;
DROP INDEX CONCURRENTLY IF EXISTS login_code_meters_window_idx;
DROP INDEX CONCURRENTLY IF EXISTS login_codes_expires_idx;
DROP INDEX CONCURRENTLY IF EXISTS reading_history_read_at_idx;
DROP INDEX CONCURRENTLY IF EXISTS refresh_tokens_expires_idx;
DROP INDEX CONCURRENTLY IF EXISTS sessions_last_use_idx;
DROP INDEX CONCURRENTLY IF EXISTS notifications_created_idx;
DROP INDEX CONCURRENTLY IF EXISTS jobs_finished_idx;
