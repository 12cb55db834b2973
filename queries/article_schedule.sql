-- Scheduled publishing (issue #32, migration 00032). A scheduled article has status 'scheduled'
-- (hidden_status 'scheduled' when a moderator hid it: only its author's status moves, as in
-- ArticleTransition) and publish_at; the article_publish job publishes it at that instant.

-- name: ArticleSchedule :one
-- Schedules a draft or withdrawn article, or moves a scheduled one's time; any other status
-- (published) changes nothing and returns no row. Not searchable until it publishes: a draft or a
-- withdrawn article has no search document, and none is made here.
UPDATE articles
SET status        = CASE WHEN status = 'hidden' THEN 'hidden' ELSE 'scheduled' END,
    hidden_status = CASE WHEN status = 'hidden' THEN 'scheduled' END,
    publish_at    = @publish_at::timestamptz,
    version       = version + 1,
    updated_at    = now()
WHERE id = @id::bigint AND COALESCE(hidden_status, status) IN ('draft', 'withdrawn', 'scheduled')
RETURNING id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at;

-- name: ArticleUnschedule :one
-- Cancels a schedule: the article is a draft again (no row when it is not scheduled). Its job
-- finds the row changed and does nothing.
UPDATE articles
SET status        = CASE WHEN status = 'hidden' THEN 'hidden' ELSE 'draft' END,
    hidden_status = CASE WHEN status = 'hidden' THEN 'draft' END,
    publish_at    = NULL,
    version       = version + 1,
    updated_at    = now()
WHERE id = @id::bigint AND COALESCE(hidden_status, status) = 'scheduled'
RETURNING id, slug, author_id, title, description, body, tag_list, status, version, created_at, updated_at, published_at, hidden_status, hidden_reason, cover_image, publish_at;

-- name: ArticlePublishScheduled :one
-- The article_publish job's compare-and-set: publishes the article only if it is still scheduled
-- at exactly @publish_at, the instant the job was enqueued for. A job made stale by a new time, a
-- cancel or a manual publish or withdrawal matches no row, and of two runs of one job (claimed
-- twice after a lost lease) the second finds the row published: one publication. Otherwise it is
-- ArticleTransition's publish (search document, place in publication order; a hidden article
-- stays hidden). An author suspended meanwhile gets it published but hidden, as the suspension
-- hid their other published articles (no moderator's reason: ArticleRestoreByAuthor shows it
-- when the suspension ends).
UPDATE articles a
SET status        = CASE WHEN a.status = 'hidden' OR s.suspended THEN 'hidden' ELSE 'published' END,
    hidden_status = CASE WHEN a.status = 'hidden' OR s.suspended THEN 'published' END,
    hidden_at     = CASE WHEN a.status <> 'hidden' AND s.suspended THEN now() ELSE a.hidden_at END,
    published_at  = COALESCE(a.published_at, now()),
    publish_at    = NULL,
    version       = a.version + 1,
    updated_at    = now(),
    search_vector = CASE WHEN a.status <> 'hidden' AND NOT s.suspended
                         THEN inkwell_search_document((@search_config::text)::regconfig, a.title, a.description, a.body) END,
    search_seq    = CASE WHEN a.status <> 'hidden' AND NOT s.suspended THEN nextval('articles_search_seq') ELSE a.search_seq END
FROM (SELECT COALESCE(u.suspended_until > now(), false) AS suspended
      FROM articles x JOIN users u ON u.id = x.author_id WHERE x.id = @id::bigint) s
WHERE a.id = @id::bigint AND COALESCE(a.hidden_status, a.status) = 'scheduled' AND a.publish_at = @publish_at::timestamptz
RETURNING a.id, a.slug, a.author_id, a.title, a.description, a.body, a.tag_list, a.status, a.version, a.created_at,
          a.updated_at, a.published_at, a.hidden_status, a.hidden_reason, a.cover_image, a.publish_at;

-- name: ArticleCountScheduledByAuthor :one
-- The author's scheduled articles (author_article_counts has no column for them), off
-- articles_author_status_idx: few per author.
SELECT count(*)::bigint FROM articles WHERE author_id = @author_id::bigint AND status = 'scheduled';
