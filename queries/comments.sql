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

-- name: CommentDelete :execrows
DELETE FROM comments WHERE id = @id::bigint;
