-- name: FollowInsert :exec
INSERT INTO follows (follower_id, followee_id)
VALUES (@follower_id::bigint, @followee_id::bigint)
ON CONFLICT DO NOTHING;

-- name: FollowDelete :exec
DELETE FROM follows
WHERE follower_id = @follower_id::bigint AND followee_id = @followee_id::bigint;

-- name: FollowExists :one
SELECT EXISTS (
    SELECT 1 FROM follows
    WHERE follower_id = @follower_id::bigint AND followee_id = @followee_id::bigint
)::boolean AS following;

-- name: FollowListFolloweesAmong :many
SELECT followee_id FROM follows
WHERE follower_id = @follower_id::bigint AND followee_id = ANY (@followee_ids::bigint[]);

-- name: FollowListFolloweeIDs :many
-- Everyone a user follows (the feed's stamp is made from them).
SELECT followee_id FROM follows WHERE follower_id = @follower_id::bigint ORDER BY followee_id;
