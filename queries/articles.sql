-- Full articles are read with their columns named, never *: search_vector (migration 00021) is
-- as large as the text it indexes and no caller needs it back.

-- name: ArticleInsert :one
-- search_vector is set in the same statement (see ArticleUpdateContent), and a published
-- article takes the next place in publication order (search_seq, migration 00024).
INSERT INTO articles (slug, author_id, title, description, body, tag_list, cover_image, status, published_at, search_vector, search_seq)
VALUES (@slug::text, @author_id::bigint, @title::text, @description::text, @body::text, @tag_list::text[], @cover_image::text,
        @status::text, CASE WHEN @status::text = 'published' THEN now() END,
        CASE WHEN @status::text = 'published'
             THEN inkwell_search_document((@search_config::text)::regconfig, @title::text, @description::text, @body::text) END,
        CASE WHEN @status::text = 'published' THEN nextval('articles_search_seq') END)
RETURNING id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at;

-- name: ArticleGetBySlug :one
SELECT id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at
FROM articles WHERE slug = @slug::text;

-- name: ArticleGetByIDForUpdate :one
SELECT id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at
FROM articles WHERE id = @id::bigint FOR UPDATE;

-- name: ArticleUpdateContent :one
-- The version guard makes a lost update impossible even if a caller skipped the row lock. The
-- search document follows the text in the same statement, so search never shows an edit late;
-- only published articles carry one (drafts and withdrawn articles are not searchable, and
-- publishing computes it).
UPDATE articles
SET title         = @title::text,
    description   = @description::text,
    body          = @body::text,
    tag_list      = @tag_list::text[],
    cover_image   = @cover_image::text,
    version       = version + 1,
    updated_at    = now(),
    search_vector = CASE WHEN status = 'published'
                         THEN inkwell_search_document((@search_config::text)::regconfig, @title::text, @description::text, @body::text) END
WHERE id = @id::bigint AND version = @expected_version::int
RETURNING id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at;

-- name: ArticleTransition :one
-- Status changes are guarded in SQL: the row changes only if its author's status is one of
-- from_statuses, so an illegal or concurrent transition updates nothing. Publishing computes the
-- search document and takes the next place in publication order (a re-published article is news
-- again); withdrawing clears the document (the partial index drops the row either way). A hidden
-- article (migration 00027) stays hidden: only the status its author gave it (hidden_status)
-- moves, and it gets no document until a moderator unhides it. Publishing or withdrawing a
-- scheduled article by hand cancels its schedule (#32): publish_at goes, and the pending
-- article_publish job finds nothing to do.
UPDATE articles
SET status        = CASE WHEN status = 'hidden' THEN 'hidden' ELSE @to_status::text END,
    hidden_status = CASE WHEN status = 'hidden' THEN @to_status::text END,
    published_at  = CASE WHEN @to_status::text = 'published' THEN COALESCE(published_at, now()) ELSE published_at END,
    publish_at    = NULL,
    version       = version + 1,
    updated_at    = now(),
    search_vector = CASE WHEN status <> 'hidden' AND @to_status::text = 'published'
                         THEN inkwell_search_document((@search_config::text)::regconfig, title, description, body) END,
    search_seq    = CASE WHEN status <> 'hidden' AND @to_status::text = 'published' THEN nextval('articles_search_seq') ELSE search_seq END
WHERE id = @id::bigint AND COALESCE(hidden_status, status) = ANY (@from_statuses::text[])
RETURNING id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at;

-- name: ArticleDelete :execrows
DELETE FROM articles WHERE id = @id::bigint;

-- name: ArticleListPublished :many
-- Lists (docs/ARCHITECTURE.md, "Lists and counts") walk one index in their own order and stop
-- after the page. A cursor is the last row's (created_at, id); the first page passes the largest
-- one there is (repository.keyset), so one plan, generic or custom, serves every page with the
-- cursor as an index condition. Lists carry no bodies (the RealWorld spec dropped them from
-- multiple-article answers).
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM articles a
WHERE a.status = 'published'
  AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
ORDER BY a.created_at DESC, a.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleListByTag :many
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM article_tags t
JOIN articles a ON a.id = t.article_id
WHERE t.tag = @tag::text
  AND (t.created_at, t.article_id) < (@before_created_at::timestamptz, @before_id::bigint)
ORDER BY t.created_at DESC, t.article_id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleListPublishedByAuthor :many
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM articles a
WHERE a.author_id = @author_id::bigint AND a.status = 'published'
  AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
ORDER BY a.created_at DESC, a.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleListFavorited :many
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM favorite_articles f
JOIN articles a ON a.id = f.article_id
WHERE f.user_id = @user_id::bigint
  AND (f.created_at, f.article_id) < (@before_created_at::timestamptz, @before_id::bigint)
ORDER BY f.created_at DESC, f.article_id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleListFiltered :many
-- Two or three filters at once. Its cost is that of the most selective filter's rows walked
-- until a page matches the others: bounded by that filter's size, not by the table's.
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM articles a
WHERE a.status = 'published'
  AND (sqlc.narg(tag)::text IS NULL OR EXISTS (
        SELECT 1 FROM article_tags t
        WHERE t.tag = sqlc.narg(tag)::text AND t.created_at = a.created_at AND t.article_id = a.id))
  AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
  AND (sqlc.narg(favorited_by)::bigint IS NULL OR EXISTS (
        SELECT 1 FROM favorite_articles f
        WHERE f.user_id = sqlc.narg(favorited_by)::bigint AND f.created_at = a.created_at AND f.article_id = a.id))
  AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
ORDER BY a.created_at DESC, a.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleCountFiltered :one
-- articlesCount of two or three filters at once: exact up to @cap, and @cap beyond it.
SELECT count(*)::bigint
FROM (SELECT 1
      FROM articles a
      WHERE a.status = 'published'
        AND (sqlc.narg(tag)::text IS NULL OR EXISTS (
              SELECT 1 FROM article_tags t
              WHERE t.tag = sqlc.narg(tag)::text AND t.created_at = a.created_at AND t.article_id = a.id))
        AND (sqlc.narg(author_id)::bigint IS NULL OR a.author_id = sqlc.narg(author_id)::bigint)
        AND (sqlc.narg(favorited_by)::bigint IS NULL OR EXISTS (
              SELECT 1 FROM favorite_articles f
              WHERE f.user_id = sqlc.narg(favorited_by)::bigint AND f.created_at = a.created_at AND f.article_id = a.id))
      LIMIT @cap::int) capped;

-- name: ArticleListFeed :many
-- The articles of the authors a reader follows, newest first, without reading every followed
-- author's articles: the newest page of the merge of all their lists can only hold articles by
-- depth (lim+off) authors whose newest article before the cursor is newest (any other author's
-- articles are older than those lim+off heads). So: one index-only probe per followed author for
-- its head, then one probe of depth rows for each of the depth newest heads, and a sort of
-- at most depth^2 keys.
WITH heads AS (
    SELECT f.followee_id, h.created_at, h.id
    FROM follows f
    CROSS JOIN LATERAL (
        SELECT a.created_at, a.id
        FROM articles a
        WHERE a.author_id = f.followee_id AND a.status = 'published'
          AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
        ORDER BY a.created_at DESC, a.id DESC
        LIMIT 1
    ) h
    WHERE f.follower_id = @follower_id::bigint
    ORDER BY h.created_at DESC, h.id DESC
    LIMIT @depth::int
), page AS (
    SELECT c.created_at, c.id
    FROM heads
    CROSS JOIN LATERAL (
        SELECT a.created_at, a.id
        FROM articles a
        WHERE a.author_id = heads.followee_id AND a.status = 'published'
          AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
        ORDER BY a.created_at DESC, a.id DESC
        LIMIT @depth::int
    ) c
    ORDER BY c.created_at DESC, c.id DESC
    LIMIT @lim::int OFFSET @off::int
)
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM page p
JOIN articles a ON a.id = p.id
ORDER BY p.created_at DESC, p.id DESC;

-- name: ArticleCountFeed :one
-- The feed's articlesCount: one counts row per followed author.
SELECT COALESCE(sum(c.published), 0)::bigint AS total
FROM follows f
JOIN author_article_counts c ON c.author_id = f.followee_id
WHERE f.follower_id = @follower_id::bigint;

-- name: ArticleListByAuthor :many
-- An author's own list, every status: the merge of the author's five status lists (hidden and scheduled too), each read
-- off articles_author_status_idx in order (a Merge Append), so no sort of all their articles.
-- After a cursor (the first page passes beforeEverything) or an offset, like the public lists.
SELECT u.*
FROM (
    (SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
            a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
     FROM articles a
     WHERE a.author_id = @author_id::bigint AND a.status = 'draft'
       AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT @depth::int)
    UNION ALL
    (SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
            a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
     FROM articles a
     WHERE a.author_id = @author_id::bigint AND a.status = 'published'
       AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT @depth::int)
    UNION ALL
    (SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
            a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
     FROM articles a
     WHERE a.author_id = @author_id::bigint AND a.status = 'withdrawn'
       AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT @depth::int)
    UNION ALL
    (SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
            a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
     FROM articles a
     WHERE a.author_id = @author_id::bigint AND a.status = 'hidden'
       AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT @depth::int)
    UNION ALL
    (SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
            a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
     FROM articles a
     WHERE a.author_id = @author_id::bigint AND a.status = 'scheduled'
       AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT @depth::int)
) u
ORDER BY u.created_at DESC, u.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleListByAuthorStatus :many
-- An author's own list, one status.
SELECT a.id, a.slug, a.author_id, a.title, a.description, a.tag_list, a.status, a.version,
       a.created_at, a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at
FROM articles a
WHERE a.author_id = @author_id::bigint AND a.status = @status::text
  AND (a.created_at, a.id) < (@before_created_at::timestamptz, @before_id::bigint)
ORDER BY a.created_at DESC, a.id DESC
LIMIT @lim::int OFFSET @off::int;

-- name: ArticleCountsSite :one
SELECT COALESCE(sum(published), 0)::bigint FROM site_article_counts;

-- name: ArticleCountsByAuthor :one
SELECT drafts, published, withdrawn FROM author_article_counts WHERE author_id = @author_id::bigint;

-- name: ArticleCountsByTag :one
SELECT published FROM tag_article_counts WHERE tag = @tag::text;

-- name: ArticleCountsFavorited :one
SELECT favorites FROM user_favorite_counts WHERE user_id = @user_id::bigint;

-- name: TagListPopular :many
-- The tag cloud, read off the counts' popularity index.
SELECT c.tag
FROM tag_article_counts c
WHERE c.published > 0
ORDER BY c.published DESC, c.tag
LIMIT @lim::int;

-- name: ArticleGetBySlugs :many
-- Full articles for the article cache's batch fill (a cached search page's hits).
SELECT id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at
FROM articles WHERE slug = ANY (@slugs::text[]);
