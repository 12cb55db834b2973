-- +goose NO TRANSACTION
-- +goose Up
-- Issue #33, live notifications (docs/API.md, "Live notifications"). A stream's Last-Event-ID is a
-- notification id: the replay and the live catch-up read a user's notifications after an id, in id
-- order, off this index (notifications_recent_idx orders by created_at, which is the event's time,
-- not the insert's). Built CONCURRENTLY, dropped first, so a failed run is simply run again.
DROP INDEX CONCURRENTLY IF EXISTS notifications_user_id_idx;
CREATE INDEX CONCURRENTLY notifications_user_id_idx ON notifications (user_id, id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS notifications_user_id_idx;
