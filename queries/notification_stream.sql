-- name: NotificationStreamLatestID :one
-- The id of a user's newest notification (0: none): where a stream without Last-Event-ID starts.
SELECT COALESCE(max(id), 0)::bigint FROM notifications WHERE user_id = @user_id::bigint;

-- name: NotificationStreamAfterMany :many
-- A user's notifications after an id, oldest first (a stream's replay and catch-up), rendered as
-- NotificationList renders them, for many streams at once (the ones a wake-up woke together): for each
-- pair i of (user_ids[i], after_ids[i]), that user's notifications after that id, oldest first, at
-- most lim each; ord is i. One index range of notifications_user_id_idx per pair.
SELECT g.i::bigint AS ord, n.id, n.kind, n.detail, n.created_at, n.read_at,
       u.username AS actor_username, a.slug AS article_slug, a.title AS article_title
FROM generate_subscripts(@user_ids::bigint[], 1) AS g (i)
CROSS JOIN LATERAL (
    SELECT x.id, x.kind, x.detail, x.created_at, x.read_at, x.actor_id, x.article_id
    FROM notifications x
    WHERE x.user_id = (@user_ids::bigint[])[g.i] AND x.id > (@after_ids::bigint[])[g.i]
    ORDER BY x.id
    LIMIT @lim::int
) n
LEFT JOIN users u ON u.id = n.actor_id
LEFT JOIN articles a ON a.id = n.article_id AND a.status = 'published'
ORDER BY g.i, n.id;
