-- name: NotificationStreamAfter :many
-- A user's notifications after an id, oldest first (a stream's replay and catch-up), rendered as
-- NotificationList renders them. Walks notifications_user_id_idx.
SELECT n.*, u.username AS actor_username, a.slug AS article_slug, a.title AS article_title
FROM notifications n
LEFT JOIN users u ON u.id = n.actor_id
LEFT JOIN articles a ON a.id = n.article_id AND a.status = 'published'
WHERE n.user_id = @user_id::bigint AND n.id > @after_id::bigint
ORDER BY n.id
LIMIT @lim::int;

-- name: NotificationStreamLatestID :one
-- The id of a user's newest notification (0: none): where a stream without Last-Event-ID starts.
SELECT COALESCE(max(id), 0)::bigint FROM notifications WHERE user_id = @user_id::bigint;
