-- name: NotificationFanOut :many
-- Notifies one page of an author's followers (keyset on follower id), skipping any already
-- notified of this event, and returns the notifications written (the live streams are handed
-- them); the page's highest user_id is the follower to continue after.
-- A notification is dated by its event (when the author acted), not by when a consumer applied it:
-- several consumers apply events in parallel, out of order.
INSERT INTO notifications (user_id, kind, actor_id, article_id, event_id, created_at)
SELECT f.follower_id, @kind::text, @actor_id::bigint, @article_id::bigint, @event_id::text,
       COALESCE(sqlc.narg(event_at)::timestamptz, now())
FROM follows f
WHERE f.followee_id = @actor_id::bigint AND f.follower_id > @after_follower::bigint
ORDER BY f.follower_id
LIMIT @lim::int
ON CONFLICT (user_id, event_id) DO NOTHING
RETURNING id, user_id, created_at;

-- name: NotificationFanOutRender :one
-- What a fan-out's notifications show besides their own columns, as NotificationList renders
-- them: the actor's username, and the article's slug and title while it is published.
SELECT coalesce((SELECT u.username FROM users u WHERE u.id = @actor_id::bigint), '')::text AS actor_username,
       coalesce((SELECT a.slug FROM articles a WHERE a.id = @article_id::bigint AND a.status = 'published'), '')::text AS article_slug,
       coalesce((SELECT a.title FROM articles a WHERE a.id = @article_id::bigint AND a.status = 'published'), '')::text AS article_title;

-- name: ArticleFanoutClaim :execrows
-- Claims the announcement of an article to its author's followers: one row if the article is
-- published now and was never announced, none otherwise (withdrawn or back to draft before the
-- event was applied, or announced by an earlier publication). A concurrent claim of the same
-- article waits for this one's transaction and then claims nothing.
INSERT INTO article_fanouts (article_id)
SELECT a.id FROM articles a WHERE a.id = @article_id::bigint AND a.status = 'published'
ON CONFLICT (article_id) DO NOTHING;

-- name: NotificationList :many
-- The article is joined only while it is published: a notification of an article its reader may
-- not see now keeps its place in the list (the page stays one index range) but shows no article,
-- neither the title it had nor one typed since.
SELECT n.*, u.username AS actor_username, a.slug AS article_slug, a.title AS article_title
FROM notifications n
LEFT JOIN users u ON u.id = n.actor_id
LEFT JOIN articles a ON a.id = n.article_id AND a.status = 'published'
WHERE n.user_id = @user_id::bigint
  AND (n.created_at, n.id) < (@before_created_at::timestamptz, @before_id::bigint)
ORDER BY n.created_at DESC, n.id DESC
LIMIT @lim::int;

-- name: NotificationMarkRead :execrows
UPDATE notifications SET read_at = now()
WHERE user_id = @user_id::bigint AND read_at IS NULL
  AND (cardinality(@ids::bigint[]) = 0 OR id = ANY (@ids::bigint[]));

-- name: NotificationUnreadCount :one
SELECT count(*)::bigint FROM notifications WHERE user_id = @user_id::bigint AND read_at IS NULL;

-- name: InboxInsert :execrows
INSERT INTO inbox (consumer, event_id) VALUES (@consumer::text, @event_id::text) ON CONFLICT DO NOTHING;

-- name: NotificationInsertNotice :exec
-- A notice of a moderation action, written in the action's unit of work; the event id (the log
-- entry's) makes it once per action and reader.
INSERT INTO notifications (user_id, kind, article_id, event_id, detail)
VALUES (@user_id::bigint, @kind::text, sqlc.narg(article_id)::bigint, @event_id::text, @detail::text)
ON CONFLICT (user_id, event_id) DO NOTHING;
