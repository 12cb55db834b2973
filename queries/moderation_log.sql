-- name: ModerationLogAppend :one
-- The moderation log is append-only (migration 00027's trigger refuses UPDATE and DELETE).
INSERT INTO moderation_log (actor_id, actor_name, action, target_kind, target_id, target_label, reason)
VALUES (sqlc.narg(actor_id)::bigint, @actor_name::text, @action::text, @target_kind::text,
        @target_id::bigint, @target_label::text, @reason::text)
RETURNING id, at;

-- name: ModerationLogList :many
-- Newest first, keyset paged along moderation_log_recent_idx.
SELECT id, actor_id, actor_name, action, target_kind, target_id, target_label, reason, at
FROM moderation_log
WHERE (at, id) < (@before_at::timestamptz, @before_id::bigint)
ORDER BY at DESC, id DESC
LIMIT @lim::int;
