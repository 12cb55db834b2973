-- +goose Up
-- The latest ranking result, kept beside the hot list in Redis, so that a process starting while
-- Redis is down still serves the last ranking instead of an error. Each ranking run replaces the
-- whole table in one short transaction: it holds one row per listed article, at most
-- INKWELL_RANK_TOP_N. There is no foreign key to articles: every read checks the listed articles
-- against articles anyway (still published?), and deleting an article must not touch this table.
CREATE TABLE hot_articles (
    position   INTEGER          PRIMARY KEY CHECK (position >= 1), -- 1 is the best
    article_id BIGINT           NOT NULL,
    likes      BIGINT           NOT NULL,                          -- the count the score was computed from
    score      DOUBLE PRECISION NOT NULL,
    ranked_at  TIMESTAMPTZ      NOT NULL
);

-- +goose Down
DROP TABLE hot_articles;
