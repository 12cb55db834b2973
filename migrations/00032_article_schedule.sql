-- Issue #32: scheduled publishing. A scheduled article has status 'scheduled' (or, hidden by a
-- moderator, hidden_status 'scheduled') and the instant it publishes itself in publish_at; the
-- article_publish job publishes it then with a compare-and-set on both (ArticlePublishScheduled).
-- Everything that shows published articles reads status = 'published', so a scheduled article is
-- in no list, count, feed, search, sitemap or hot list until it publishes; the author's counts
-- (author_article_counts) leave it out, and the author's own list counts it off
-- articles_author_status_idx (ArticleCountScheduledByAuthor).

-- +goose Up
ALTER TABLE articles
    DROP CONSTRAINT articles_status_check,
    DROP CONSTRAINT articles_hidden_status_check,
    ADD COLUMN publish_at TIMESTAMPTZ;
-- NOT VALID, then VALIDATE: the checks do not scan the table under the ALTER's exclusive lock.
ALTER TABLE articles ADD CONSTRAINT articles_status_check
    CHECK (status IN ('draft', 'published', 'withdrawn', 'hidden', 'scheduled')) NOT VALID;
ALTER TABLE articles VALIDATE CONSTRAINT articles_status_check;
ALTER TABLE articles ADD CONSTRAINT articles_hidden_status_check CHECK (
    (status = 'hidden') = (hidden_status IS NOT NULL)
    AND (hidden_status IS NULL OR hidden_status IN ('draft', 'published', 'withdrawn', 'scheduled'))) NOT VALID;
ALTER TABLE articles VALIDATE CONSTRAINT articles_hidden_status_check;
-- A publish_at exactly when the author's status is scheduled.
ALTER TABLE articles ADD CONSTRAINT articles_publish_at_check
    CHECK ((COALESCE(hidden_status, status) = 'scheduled') = (publish_at IS NOT NULL)) NOT VALID;
ALTER TABLE articles VALIDATE CONSTRAINT articles_publish_at_check;

-- +goose Down
-- Scheduled articles go back to drafts; their pending jobs go with them.
DELETE FROM jobs WHERE kind = 'article_publish' AND status IN ('ready', 'running');
ALTER TABLE articles DROP CONSTRAINT articles_publish_at_check;
ALTER TABLE articles DROP CONSTRAINT articles_hidden_status_check;
UPDATE articles SET status = 'draft' WHERE status = 'scheduled';
UPDATE articles SET hidden_status = 'draft' WHERE hidden_status = 'scheduled';
ALTER TABLE articles DROP CONSTRAINT articles_status_check;
ALTER TABLE articles
    DROP COLUMN publish_at,
    ADD CONSTRAINT articles_status_check CHECK (status IN ('draft', 'published', 'withdrawn', 'hidden')) NOT VALID;
ALTER TABLE articles VALIDATE CONSTRAINT articles_status_check;
ALTER TABLE articles ADD CONSTRAINT articles_hidden_status_check CHECK (
    (status = 'hidden') = (hidden_status IS NOT NULL)
    AND (hidden_status IS NULL OR hidden_status IN ('draft', 'published', 'withdrawn'))) NOT VALID;
ALTER TABLE articles VALIDATE CONSTRAINT articles_hidden_status_check;
