-- +goose Up
-- A keyed registration's stored answer holds no token any more: it names the account instead, and
-- each answer sent (the first and every replay) carries a session of its own
-- (service.UserService.RegisterIdempotent).
ALTER TABLE idempotency_keys ADD COLUMN session_user_id BIGINT;
-- Registrations stored before held the raw access and refresh tokens of their session. They go,
-- all of them (registration is the only use of client-scoped keys): a retry within the day runs
-- anew and is told the username or email is taken, as a retry without a key would be.
DELETE FROM idempotency_keys WHERE scope LIKE 'ip:%';

-- +goose Down
ALTER TABLE idempotency_keys DROP COLUMN session_user_id;
