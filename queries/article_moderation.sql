-- Hiding articles (issue #28): a hidden article has status 'hidden' and keeps its author's status
-- in hidden_status (migration 00027), so every reader-facing query, index, count and trigger that
-- follows status = 'published' drops it as it drops a withdrawn one.

-- name: ArticleHide :one
-- A moderator hides one article (again: the reason is replaced). Its search document goes.
UPDATE articles
SET hidden_status = COALESCE(hidden_status, status),
    status        = 'hidden',
    hidden_reason = @reason::text,
    hidden_at     = now(),
    version       = version + 1,
    updated_at    = now(),
    search_vector = NULL
WHERE id = @id::bigint
RETURNING id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at;

-- name: ArticleUnhide :one
-- A moderator restores a hidden article to its author's status, unless the author is suspended:
-- then it stays hidden, without a moderator's reason, until the suspension ends
-- (ArticleRestoreByAuthor). Publication keeps its place in search order when it had one.
UPDATE articles a
SET status        = CASE WHEN s.suspended THEN 'hidden' ELSE a.hidden_status END,
    hidden_status = CASE WHEN s.suspended THEN a.hidden_status END,
    hidden_reason = NULL,
    hidden_at     = CASE WHEN s.suspended THEN a.hidden_at END,
    version       = a.version + 1,
    updated_at    = now(),
    search_vector = CASE WHEN NOT s.suspended AND a.hidden_status = 'published'
                         THEN inkwell_search_document((@search_config::text)::regconfig, a.title, a.description, a.body) END,
    search_seq    = CASE WHEN NOT s.suspended AND a.hidden_status = 'published'
                         THEN COALESCE(a.search_seq, nextval('articles_search_seq')) ELSE a.search_seq END
FROM (SELECT COALESCE(u.suspended_until > now(), false) AS suspended
      FROM articles x JOIN users u ON u.id = x.author_id WHERE x.id = @id::bigint) s
WHERE a.id = @id::bigint AND a.status = 'hidden'
RETURNING a.id, a.slug, a.author_id, a.title, a.description, a.body, a.tag_list, a.status, a.version, a.created_at,
          a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at;

-- name: ArticleHideByAuthor :many
-- A suspension hides the author's published articles (along articles_author_status_idx). They
-- carry no moderator's reason, which is how ArticleRestoreByAuthor tells them apart.
UPDATE articles
SET hidden_status = status,
    status        = 'hidden',
    hidden_at     = now(),
    version       = version + 1,
    updated_at    = now(),
    search_vector = NULL
WHERE author_id = @author_id::bigint AND status = 'published'
RETURNING id, slug, tag_list;

-- name: ArticleRestoreByAuthor :many
-- The end of a suspension restores the articles it hid (hidden, no moderator's reason).
UPDATE articles
SET status        = hidden_status,
    hidden_status = NULL,
    hidden_at     = NULL,
    version       = version + 1,
    updated_at    = now(),
    search_vector = CASE WHEN hidden_status = 'published'
                         THEN inkwell_search_document((@search_config::text)::regconfig, title, description, body) END,
    search_seq    = CASE WHEN hidden_status = 'published' THEN COALESCE(search_seq, nextval('articles_search_seq')) ELSE search_seq END
WHERE author_id = @author_id::bigint AND status = 'hidden' AND hidden_reason IS NULL
RETURNING id, slug, tag_list;

-- name: ArticleCountHiddenByAuthor :one
-- The author's own list counts hidden articles too (author_article_counts has no column for
-- them): an index-only count along articles_author_status_idx, as many rows as are hidden.
SELECT count(*)::bigint FROM articles WHERE author_id = @author_id::bigint AND status = 'hidden';

-- name: CommentHide :one
UPDATE comments SET hidden_reason = @reason::text, hidden_at = now()
WHERE id = @id::bigint
RETURNING *;

-- name: CommentUnhide :one
UPDATE comments SET hidden_reason = NULL, hidden_at = NULL
WHERE id = @id::bigint
RETURNING *;
