-- What refers to an upload (migration 00028): a user's avatar, an article's cover and body.

-- name: UploadsOwnedByKeys :many
-- Which of keys (object keys of originals or derived sizes) name uploads of user_id, and which
-- upload each names. Index probes per key, whatever the user's number of uploads: the originals
-- along uploads_object_key_idx, the derived sizes along uploads_variant_keys_idx (GIN). The
-- uploads are found by key first (MATERIALIZED keeps the planner from walking the user's uploads
-- instead), then kept when they are the user's.
WITH named AS MATERIALIZED (
    SELECT u.id, u.user_id, u.object_key AS key
    FROM uploads u
    WHERE u.object_key = ANY (@keys::text[])
    UNION ALL
    SELECT u.id, u.user_id, k.key
    FROM unnest(@keys::text[]) AS k(key)
    JOIN uploads u ON u.variant_keys @> ARRAY[k.key]
)
SELECT named.id, named.key::text AS key
FROM named
WHERE named.user_id = @user_id::bigint;

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
