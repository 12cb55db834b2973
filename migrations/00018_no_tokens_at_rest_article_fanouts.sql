-- +goose Up
-- A keyed registration's stored answer holds no token any more: it names the account instead, and
-- each answer sent (the first and every replay) carries a session of its own
-- (service.UserService.RegisterIdempotent).
ALTER TABLE idempotency_keys ADD COLUMN session_user_id BIGINT;
-- Registrations stored before held the raw access and refresh tokens of their session. They go,
-- all of them (registration is the only use of client-scoped keys): a retry within the day runs
-- anew and is told the username or email is taken, as a retry without a key would be.
DELETE FROM idempotency_keys WHERE scope LIKE 'ip:%';

-- An article is announced to its author's followers once, the first time a publication event of it
-- is applied while it is still published; a later withdraw/publish cycle notifies nobody again.
-- The fan-out claims the row in the transaction that writes the notifications
-- (repository.NotificationRepository.NotifyFollowers).
CREATE TABLE article_fanouts (
    article_id BIGINT PRIMARY KEY REFERENCES articles (id) ON DELETE CASCADE,
    fanned_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Articles whose followers were notified before this table existed count as announced.
INSERT INTO article_fanouts (article_id, fanned_at)
SELECT article_id, min(created_at) FROM notifications
WHERE kind = 'article.published' AND article_id IS NOT NULL
GROUP BY article_id;

-- +goose Down
DROP TABLE article_fanouts;
ALTER TABLE idempotency_keys DROP COLUMN session_user_id;
