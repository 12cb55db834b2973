-- What refers to an upload (migration 00028): a user's avatar, an article's cover and body.

-- name: UploadsOwnedByKeys :many
-- Which of keys (object keys of originals or derived sizes) name uploads of user_id, and which
-- upload each names. Walks the user's uploads (uploads_user_recent_idx), bounded by their quota.
SELECT u.id, u.object_key::text AS key
FROM uploads u
WHERE u.user_id = @user_id::bigint AND u.object_key = ANY (@keys::text[])
UNION ALL
SELECT u.id, (v.value ->> 'key')::text AS key
FROM uploads u, jsonb_each(u.variants) v
WHERE u.user_id = @user_id::bigint AND (v.value ->> 'key') = ANY (@keys::text[]);

-- name: UploadReferencesReplace :exec
-- The uploads an owner refers to are now exactly upload_ids: references it dropped go, new ones
-- come, and every upload whose reference changed is stamped (referenced_at: the 7 days of
-- retention count from the last change).
WITH gone AS (
    DELETE FROM upload_references
    WHERE owner_kind = @owner_kind::text AND owner_id = @owner_id::bigint
      AND NOT (upload_id = ANY (@upload_ids::bigint[]))
    RETURNING upload_id
), added AS (
    INSERT INTO upload_references (owner_kind, owner_id, upload_id)
    SELECT @owner_kind::text, @owner_id::bigint, i FROM unnest(@upload_ids::bigint[]) AS i
    ON CONFLICT DO NOTHING
    RETURNING upload_id
)
UPDATE uploads SET referenced_at = now()
WHERE id IN (SELECT upload_id FROM gone UNION SELECT upload_id FROM added);
