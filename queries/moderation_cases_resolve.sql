-- name: ModerationCaseResolveTarget :many
-- Resolves the target's open case and its open reports, and tells each reporter (without naming
-- the action) under one event id: one statement, in the action's unit of work. Returns the
-- reporters told (none when the target had no open case).
WITH c AS (
    UPDATE moderation_cases
    SET status = 'resolved', resolved_at = now(), resolved_by = sqlc.narg(actor_id)::bigint,
        resolution = @resolution::text, updated_at = now()
    WHERE target_kind = @target_kind::text AND target_id = @target_id::bigint AND status = 'open'
    RETURNING id
), r AS (
    UPDATE reports SET status = 'resolved', resolved_at = now()
    FROM c
    WHERE reports.case_id = c.id AND reports.status = 'open'
    RETURNING reports.reporter_id
)
INSERT INTO notifications (user_id, kind, event_id, detail)
SELECT DISTINCT r.reporter_id, 'report.resolved', @event_id::text, @detail::text
FROM r
ON CONFLICT (user_id, event_id) DO NOTHING
RETURNING user_id;
