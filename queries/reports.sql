-- Reports and the moderation cases they are grouped into (migration 00027): one open case per
-- target, one open report per reporter and case.

-- name: ModerationCaseOpen :one
-- Finds or opens the target's open case and locks it: concurrent filers on one target meet on the
-- partial unique index (moderation_cases_open_target_key), so they never open two cases, and the
-- row lock orders their count updates.
INSERT INTO moderation_cases (target_kind, target_id, article_id)
VALUES (@target_kind::text, @target_id::bigint, sqlc.narg(article_id)::bigint)
ON CONFLICT (target_kind, target_id) WHERE status = 'open'
DO UPDATE SET updated_at = moderation_cases.updated_at
RETURNING id;

-- name: ReportInsert :one
-- A repeat by the same reporter on the open case inserts nothing (no row returned).
INSERT INTO reports (case_id, reporter_id, reason, note)
VALUES (@case_id::bigint, @reporter_id::bigint, @reason::text, @note::text)
ON CONFLICT (case_id, reporter_id) WHERE status = 'open' DO NOTHING
RETURNING id, case_id, reporter_id, reason, note, status, created_at;

-- name: ReportGetOpen :one
SELECT id, case_id, reporter_id, reason, note, status, created_at
FROM reports
WHERE case_id = @case_id::bigint AND reporter_id = @reporter_id::bigint AND status = 'open';

-- name: ModerationCaseAddReport :exec
-- Counts a new report into its case: the reasons stay a set, the newest note wins (an empty note
-- keeps the one before).
UPDATE moderation_cases
SET report_count = report_count + 1,
    reasons      = CASE WHEN @reason::text = ANY (reasons) THEN reasons ELSE array_append(reasons, @reason::text) END,
    newest_note  = CASE WHEN @note::text <> '' THEN @note::text ELSE newest_note END,
    updated_at   = now()
WHERE id = @id::bigint;

-- name: ModerationCaseListOpen :many
-- The queue, oldest open case first, keyset paged along moderation_cases_open_idx. The names are
-- looked up per row of the page only.
SELECT c.id, c.target_kind, c.target_id, c.article_id, c.status, c.report_count, c.reasons, c.newest_note,
       c.opened_at, c.updated_at, c.resolved_at, c.resolution,
       coalesce((SELECT a.slug FROM articles a WHERE a.id = CASE WHEN c.target_kind = 'article' THEN c.target_id ELSE c.article_id END), '')::text AS article_slug,
       coalesce((SELECT u.username FROM users u WHERE c.target_kind = 'user' AND u.id = c.target_id), '')::text AS username,
       coalesce(CASE c.target_kind
            WHEN 'article' THEN (SELECT a.author_id FROM articles a WHERE a.id = c.target_id)
            WHEN 'comment' THEN (SELECT m.author_id FROM comments m WHERE m.id = c.target_id)
            ELSE c.target_id END, 0)::bigint AS owner_id
FROM moderation_cases c
WHERE c.status = 'open' AND (c.opened_at, c.id) > (@after_at::timestamptz, @after_id::bigint)
ORDER BY c.opened_at, c.id
LIMIT @lim::int;

-- name: ModerationCaseListResolved :many
-- Resolved cases, newest resolution first, keyset paged along moderation_cases_resolved_idx.
SELECT c.id, c.target_kind, c.target_id, c.article_id, c.status, c.report_count, c.reasons, c.newest_note,
       c.opened_at, c.updated_at, c.resolved_at, c.resolution,
       coalesce((SELECT a.slug FROM articles a WHERE a.id = CASE WHEN c.target_kind = 'article' THEN c.target_id ELSE c.article_id END), '')::text AS article_slug,
       coalesce((SELECT u.username FROM users u WHERE c.target_kind = 'user' AND u.id = c.target_id), '')::text AS username,
       coalesce(CASE c.target_kind
            WHEN 'article' THEN (SELECT a.author_id FROM articles a WHERE a.id = c.target_id)
            WHEN 'comment' THEN (SELECT m.author_id FROM comments m WHERE m.id = c.target_id)
            ELSE c.target_id END, 0)::bigint AS owner_id
FROM moderation_cases c
WHERE c.status = 'resolved' AND (c.resolved_at, c.id) < (@before_at::timestamptz, @before_id::bigint)
ORDER BY c.resolved_at DESC, c.id DESC
LIMIT @lim::int;

-- name: ModerationCaseGet :one
-- One case with its names; lock_row takes its row lock (a resolution in a unit of work).
SELECT c.id, c.target_kind, c.target_id, c.article_id, c.status, c.report_count, c.reasons, c.newest_note,
       c.opened_at, c.updated_at, c.resolved_at, c.resolution,
       coalesce((SELECT a.slug FROM articles a WHERE a.id = CASE WHEN c.target_kind = 'article' THEN c.target_id ELSE c.article_id END), '')::text AS article_slug,
       coalesce((SELECT u.username FROM users u WHERE c.target_kind = 'user' AND u.id = c.target_id), '')::text AS username,
       coalesce(CASE c.target_kind
            WHEN 'article' THEN (SELECT a.author_id FROM articles a WHERE a.id = c.target_id)
            WHEN 'comment' THEN (SELECT m.author_id FROM comments m WHERE m.id = c.target_id)
            ELSE c.target_id END, 0)::bigint AS owner_id
FROM moderation_cases c
WHERE c.id = @id::bigint;

-- name: ModerationCaseLock :one
SELECT status FROM moderation_cases WHERE id = @id::bigint FOR UPDATE;

-- name: ModerationCaseResolve :one
-- Resolves the target's open case and its open reports, and notices each reporter once (the
-- event id is the action's), in one statement. Returns how many cases it resolved (0 or 1) and
-- the reporters a notice was written for (announced to their live streams after COMMIT).
WITH c AS (
    UPDATE moderation_cases
    SET status = 'resolved', resolved_at = clock_timestamp(), resolved_by = sqlc.narg(actor_id)::bigint,
        resolution = @resolution::text, updated_at = now()
    WHERE target_kind = @target_kind::text AND target_id = @target_id::bigint AND status = 'open'
    RETURNING id
), r AS (
    UPDATE reports SET status = 'resolved', resolved_at = now()
    WHERE case_id IN (SELECT id FROM c) AND status = 'open'
    RETURNING reporter_id
), n AS (
    INSERT INTO notifications (user_id, kind, event_id, detail)
    SELECT DISTINCT reporter_id, @kind::text, @event_id::text, @detail::text FROM r
    ON CONFLICT (user_id, event_id) DO NOTHING
    RETURNING user_id
)
SELECT (SELECT count(*) FROM c)::bigint AS resolved,
       coalesce((SELECT array_agg(user_id ORDER BY user_id) FROM n), '{}')::bigint[] AS notified;

-- name: ModerationCaseOpenStats :one
-- The queue's size (count over the partial index), its open reports, and its oldest case (the
-- first entry of moderation_cases_open_idx; now() when the queue is empty).
SELECT count(*)::bigint AS open_cases,
       coalesce(sum(report_count), 0)::bigint AS open_reports,
       coalesce(min(opened_at), now())::timestamptz AS oldest_opened_at
FROM moderation_cases
WHERE status = 'open';
