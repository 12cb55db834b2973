-- +goose Up
CREATE TABLE articles (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug         TEXT        NOT NULL,
    author_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title        TEXT        NOT NULL,
    description  TEXT        NOT NULL,
    body         TEXT        NOT NULL,
    tag_list     TEXT[]      NOT NULL DEFAULT '{}',
    status       TEXT        NOT NULL DEFAULT 'published',
    version      INTEGER     NOT NULL DEFAULT 1,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    published_at TIMESTAMPTZ,
    CONSTRAINT articles_status_check CHECK (status IN ('draft', 'published', 'withdrawn'))
);

CREATE UNIQUE INDEX articles_slug_key ON articles (slug);
-- The public list, newest first, and its keyset cursor over (created_at, id).
CREATE INDEX articles_published_idx ON articles (created_at DESC, id DESC) WHERE status = 'published';
-- An author's own list and the author filter.
CREATE INDEX articles_author_idx ON articles (author_id, created_at DESC, id DESC);
-- ?tag= filter: tag_list @> ARRAY[tag].
CREATE INDEX articles_tags_idx ON articles USING GIN (tag_list);

-- Per-article comment numbering: one row per article, bumped atomically.
CREATE TABLE article_comment_seqs (
    article_id BIGINT PRIMARY KEY REFERENCES articles (id) ON DELETE CASCADE,
    last_seq   BIGINT NOT NULL
);

CREATE TABLE comments (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    article_id BIGINT      NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    seq        BIGINT      NOT NULL,
    author_id  BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    body       TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT comments_article_seq_key UNIQUE (article_id, seq)
);

-- Interaction counters per item (biz names the kind of item, biz_id its id).
CREATE TABLE interactives (
    biz         TEXT   NOT NULL,
    biz_id      BIGINT NOT NULL,
    read_cnt    BIGINT NOT NULL DEFAULT 0,
    like_cnt    BIGINT NOT NULL DEFAULT 0,
    collect_cnt BIGINT NOT NULL DEFAULT 0,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT interactives_biz_key UNIQUE (biz, biz_id)
);

-- A user's like of an item. Unliking clears liked (soft delete) so the row, and its history, stays.
CREATE TABLE likes (
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    biz        TEXT        NOT NULL,
    biz_id     BIGINT      NOT NULL,
    liked      BOOLEAN     NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, biz, biz_id)
);
-- ?favorited=username: the items a user currently likes.
CREATE INDEX likes_user_liked_idx ON likes (user_id, biz, biz_id) WHERE liked;

-- +goose Down
DROP TABLE likes;
DROP TABLE interactives;
DROP TABLE comments;
DROP TABLE article_comment_seqs;
DROP TABLE articles;
