-- name: ArticleRevisionInsert :exec
-- The version an accepted edit replaced (repository/revisions WriteIn), in the edit's unit of work.
INSERT INTO article_revisions (article_id, version, title, description, body, tags, created_at)
VALUES (@article_id::bigint, @version::int, @title::text, @description::text, @body::text, @tags::text[], @created_at::timestamptz);

-- name: ArticleRevisionPrune :execrows
-- Retention: drops the article's revisions older than its newest @keep, in the insert's unit of
-- work. The newest @keep + 1st is found walking the primary key backwards (keep + 1 entries), and
-- the DELETE is a range of the same key: bounded, never a scan of the table or of the article's
-- whole history. Run after every insert, it deletes at most one row.
DELETE FROM article_revisions
WHERE article_id = @article_id::bigint
  AND version <= (SELECT r.version FROM article_revisions r
                  WHERE r.article_id = @article_id::bigint
                  ORDER BY r.version DESC
                  OFFSET @keep::int LIMIT 1);

-- name: ArticleRevisionList :many
-- One page of an article's revisions, newest first, before version @before_version (keyset on the
-- primary key; a first page passes the largest int). No body: the list shows what changed when.
SELECT version, title, description, tags, created_at
FROM article_revisions
WHERE article_id = @article_id::bigint AND version < @before_version::int
ORDER BY version DESC
LIMIT @lim::int;

-- name: ArticleRevisionGet :one
SELECT version, title, description, body, tags, created_at
FROM article_revisions
WHERE article_id = @article_id::bigint AND version = @version::int;
