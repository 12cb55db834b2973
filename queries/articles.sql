-- name: ArticleInsert :one
INSERT INTO articles (slug, author_id, title, description, body, tag_list, status, published_at)
VALUES (@slug::text, @author_id::bigint, @title::text, @description::text, @body::text, @tag_list::text[],
        @status::text, CASE WHEN @status::text = 'published' THEN now() END)
RETURNING *;

-- name: ArticleGetBySlug :one
SELECT * FROM articles WHERE slug = @slug::text;

-- name: ArticleGetByIDForUpdate :one
SELECT * FROM articles WHERE id = @id::bigint FOR UPDATE;

-- name: ArticleUpdateContent :one
-- The version guard makes a lost update impossible even if a caller skipped the row lock.
UPDATE articles
SET title       = @title::text,
    description = @description::text,
    body        = @body::text,
    tag_list    = @tag_list::text[],
    version     = version + 1,
    updated_at  = now()
WHERE id = @id::bigint AND version = @expected_version::int
RETURNING *;

-- name: ArticleTransition :one
-- Status changes are guarded in SQL: the row changes only if its status is one of from_statuses,
-- so an illegal or concurrent transition updates nothing.
UPDATE articles
SET status       = @to_status::text,
    published_at = CASE WHEN @to_status::text = 'published' THEN COALESCE(published_at, now()) ELSE published_at END,
    version      = version + 1,
    updated_at   = now()
WHERE id = @id::bigint AND status = ANY (@from_statuses::text[])
RETURNING *;

-- name: ArticleDelete :execrows
DELETE FROM articles WHERE id = @id::bigint;

-- name: ArticleListPublished :many
-- Published articles, newest first, optionally filtered; paged by offset or by the keyset cursor
-- (before_created_at, before_id). Bodies are included: RealWorld clients expect them in lists.
SELECT a.*
FROM articles a
WHERE a.status = 'published'
  AND (sqlc.narg(tag)::text IS NULL OR a.tag_list @> ARRAY[sqlc.narg(tag)::text])
  AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
  AND (sqlc.narg(favorited_by)::bigint IS NULL OR EXISTS (
        SELECT 1 FROM likes l
        WHERE l.user_id = sqlc.narg(favorited_by)::bigint AND l.biz = 'article' AND l.biz_id = a.id AND l.liked))
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (a.created_at, a.id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::bigint))
ORDER BY a.created_at DESC, a.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleCountPublished :one
SELECT count(*)::bigint
FROM articles a
WHERE a.status = 'published'
  AND (sqlc.narg(tag)::text IS NULL OR a.tag_list @> ARRAY[sqlc.narg(tag)::text])
  AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
  AND (sqlc.narg(favorited_by)::bigint IS NULL OR EXISTS (
        SELECT 1 FROM likes l
        WHERE l.user_id = sqlc.narg(favorited_by)::bigint AND l.biz = 'article' AND l.biz_id = a.id AND l.liked));

-- name: ArticleListFeed :many
SELECT a.*
FROM articles a
JOIN follows f ON f.followee_id = a.author_id AND f.follower_id = @follower_id::bigint
WHERE a.status = 'published'
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (a.created_at, a.id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::bigint))
ORDER BY a.created_at DESC, a.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleCountFeed :one
SELECT count(*)::bigint
FROM articles a
JOIN follows f ON f.followee_id = a.author_id AND f.follower_id = @follower_id::bigint
WHERE a.status = 'published';

-- name: ArticleListByAuthor :many
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at
FROM articles a
WHERE a.author_id = @author_id::bigint
  AND (sqlc.narg(status)::text IS NULL OR a.status = sqlc.narg(status)::text)
ORDER BY a.created_at DESC, a.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleCountByAuthor :one
SELECT count(*)::bigint
FROM articles a
WHERE a.author_id = @author_id::bigint
  AND (sqlc.narg(status)::text IS NULL OR a.status = sqlc.narg(status)::text);

-- name: TagListPopular :many
SELECT t.tag::text AS tag
FROM articles a, unnest(a.tag_list) AS t(tag)
WHERE a.status = 'published'
GROUP BY t.tag
ORDER BY count(*) DESC, t.tag
LIMIT @lim::int;
