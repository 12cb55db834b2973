-- name: UploadInsert :one
-- A user's new upload; its keys are no longer orphans (an orphan row held by the retention pass
-- is waited for: see UploadOrphanUnmark).
INSERT INTO uploads (user_id, object_key, content_type, width, height, bytes, sha256, variants, variant_keys)
VALUES (@user_id, @object_key, @content_type, @width, @height, @bytes, @sha256, @variants, @variant_keys::text[])
RETURNING id, created_at;

-- name: UploadOrphanUnmark :exec
-- The keys of an upload being inserted are used again. Run in the insert's unit of work: it waits
-- for the retention pass holding one of these rows, so an object the pass deletes is put again
-- after the insert commits.
DELETE FROM upload_orphans WHERE object_key = ANY(@keys::text[]);

-- name: UploadTotalAdd :exec
-- Moves a user's stored bytes (negative on delete).
INSERT INTO upload_totals (user_id, bytes) VALUES (@user_id, @delta::bigint)
ON CONFLICT (user_id) DO UPDATE SET bytes = upload_totals.bytes + excluded.bytes;

-- name: UploadUsage :one
-- A user's stored bytes in all, the bytes uploaded in the last day and when the oldest upload of
-- that day leaves the window (along uploads_user_recent_idx).
SELECT coalesce((SELECT t.bytes FROM upload_totals t WHERE t.user_id = @user_id), 0)::bigint AS total,
       coalesce(sum(u.bytes), 0)::bigint AS day,
       coalesce(min(u.created_at) + interval '1 day', now())::timestamptz AS day_frees_at
FROM uploads u
WHERE u.user_id = @user_id AND u.created_at > now() - interval '1 day';

-- name: UploadListByUser :many
-- A user's uploads, newest first, keyset paged along uploads_user_recent_idx.
SELECT id, user_id, object_key, content_type, width, height, bytes, sha256, variants, created_at
FROM uploads
WHERE user_id = @user_id AND (created_at, id) < (@before_at::timestamptz, @before_id::bigint)
ORDER BY created_at DESC, id DESC
LIMIT @lim::int;

-- name: UploadGetByID :one
SELECT id, user_id, object_key, content_type, width, height, bytes, sha256, variants, created_at
FROM uploads WHERE id = @id;

-- name: UploadDelete :one
-- Deletes a user's own upload (no row: not theirs or not there).
DELETE FROM uploads WHERE id = @id AND user_id = @user_id
RETURNING id, user_id, object_key, content_type, width, height, bytes, sha256, variants, created_at;

-- name: UploadOrphanMark :exec
-- Keys whose upload row went: candidates for the retention pass, which deletes an object only when
-- no upload uses its key any more.
INSERT INTO upload_orphans (object_key) SELECT DISTINCT unnest(@keys::text[])
ON CONFLICT (object_key) DO UPDATE SET orphaned_at = now();

-- name: UploadOrphanClaim :many
-- Up to lim orphaned keys older than the grace, held (skipping keys a concurrent upload holds)
-- until the pass's unit of work ends. used: some upload still uses the key (original or variant).
SELECT o.object_key,
       (EXISTS (SELECT 1 FROM uploads u WHERE u.object_key = o.object_key)
        OR EXISTS (SELECT 1 FROM uploads u WHERE u.variant_keys @> ARRAY[o.object_key]))::bool AS used
FROM upload_orphans o
WHERE o.orphaned_at < now() - make_interval(secs => @grace_seconds::float8)
ORDER BY o.orphaned_at
LIMIT @lim::int
FOR UPDATE OF o SKIP LOCKED;

-- name: UploadOrphanDrop :exec
DELETE FROM upload_orphans WHERE object_key = ANY(@keys::text[]);

-- name: UploadOrphanCount :one
-- Orphaned keys older than the grace, up to lim (a dry run: some may still be used).
SELECT count(*)::bigint FROM (
    SELECT 1 FROM upload_orphans
    WHERE orphaned_at < now() - make_interval(secs => @grace_seconds::float8)
    ORDER BY orphaned_at LIMIT @lim::int
) AS due;
