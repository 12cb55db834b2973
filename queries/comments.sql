-- name: CommentSeqInit :exec
INSERT INTO article_comment_seqs (article_id, last_seq) VALUES (@article_id::bigint, 0);

-- name: CommentSeqNext :one
-- One atomic statement hands out the next number: concurrent writers queue on the row lock and
-- each gets its own value, with no gaps and no duplicates (max(seq)+1 would give duplicates).
UPDATE article_comment_seqs
SET last_seq = last_seq + 1
WHERE article_id = @article_id::bigint
RETURNING last_seq;

-- name: CommentInsert :one
INSERT INTO comments (article_id, seq, author_id, body)
VALUES (@article_id::bigint, @seq::bigint, @author_id::bigint, @body::text)
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
