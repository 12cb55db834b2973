-- Issue #32, revisions: every accepted edit of a published article keeps the version it replaced
-- (title, description, body, tags), written in the edit's unit of work (repository/revisions,
-- WriteIn, called by the core's ArticleRepository.Update). version is the article's version number
-- the content had, so a revision is named by (article, version) for good: the primary key is also
-- the order of a page (newest first, keyset on version) and the order retention prunes along
-- (the newest 50 per article are kept, docs/API.md "Revisions").

-- +goose Up
CREATE TABLE IF NOT EXISTS article_revisions (
    article_id  BIGINT      NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    version     INT         NOT NULL,
    title       TEXT        NOT NULL,
    description TEXT        NOT NULL,
    body        TEXT        NOT NULL,
    tags        TEXT[]      NOT NULL DEFAULT '{}',
    -- When this version was written: the article's updated_at while the version was current.
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (article_id, version)
);

-- +goose Down
DROP TABLE IF EXISTS article_revisions;
