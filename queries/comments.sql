-- name: CommentSeqInit :exec
INSERT INTO article_comment_seqs (article_id, last_seq) VALUES (@article_id::bigint, 0);

-- name: CommentInsertNumbered :many
-- Numbers and inserts several comments on one article in one statement: the article's counter
-- moves by their number under its row lock, and they take the numbers after the old value in the
-- order given. One commit (one wait for the disk, with the row locked) then serves all of them.
-- No row comes back when the article has no counter (it was deleted).
WITH numbered AS (
    UPDATE article_comment_seqs
    SET last_seq = last_seq + cardinality(@bodies::text[])
    WHERE article_id = @article_id::bigint
    RETURNING last_seq - cardinality(@bodies::text[]) AS base
)
INSERT INTO comments (article_id, seq, author_id, body)
SELECT @article_id::bigint, n.base + i, (@author_ids::bigint[])[i], (@bodies::text[])[i]
FROM numbered n, generate_subscripts(@bodies::text[], 1) AS i
RETURNING *;

-- name: CommentListByArticle :many
SELECT * FROM comments
WHERE article_id = @article_id::bigint AND seq > @after_seq::bigint
ORDER BY seq
LIMIT @lim::int;

-- name: CommentGetByID :one
SELECT * FROM comments WHERE id = @id::bigint;

-- name: CommentLockForReply :one
-- The comment a reply names, locked until the reply commits: it cannot be deleted meanwhile, and
-- its replies_count moves in commit order.
SELECT * FROM comments WHERE id = @id::bigint FOR UPDATE;

-- name: CommentInsertReply :one
-- Numbers and inserts one reply (the article's counter, as CommentInsertNumbered); the parent's
-- replies_count moves by the insert trigger. No row when the article has no counter.
WITH numbered AS (
    UPDATE article_comment_seqs SET last_seq = last_seq + 1
    WHERE article_id = @article_id::bigint
    RETURNING last_seq
)
INSERT INTO comments (article_id, seq, author_id, body, parent_id, root_id, depth)
SELECT @article_id::bigint, n.last_seq, @author_id::bigint, @body::text, @parent_id::bigint, @root_id::bigint, @depth::smallint
FROM numbered n
RETURNING *;

-- name: CommentListReplies :many
-- One comment's direct replies after after_id, oldest first: one range of comments_replies_idx.
SELECT * FROM comments
WHERE parent_id = @parent_id::bigint AND id > @after_id::bigint
ORDER BY id
LIMIT @lim::int;

-- name: CommentLock :one
SELECT * FROM comments WHERE id = @id::bigint FOR UPDATE;

-- name: CommentDeleteLeaf :one
-- Removes a comment without replies; returns its parent (NULL at the top level). No row when the
-- comment has replies, or is gone.
DELETE FROM comments WHERE id = @id::bigint AND replies_count = 0
RETURNING parent_id;

-- name: CommentDeletePlaceholder :one
-- Removes a placeholder whose last reply went; returns its parent. No row otherwise.
DELETE FROM comments WHERE id = @id::bigint AND deleted_at IS NOT NULL AND replies_count = 0
RETURNING parent_id;

-- name: CommentMakePlaceholder :execrows
-- A comment with replies keeps its place in the thread: body and author go.
UPDATE comments SET body = '', author_id = NULL, deleted_at = now(), edited_at = NULL
WHERE id = @id::bigint AND deleted_at IS NULL;

-- name: CommentEdit :one
UPDATE comments SET body = @body::text, edited_at = now(), updated_at = now()
WHERE id = @id::bigint AND deleted_at IS NULL
RETURNING *;
