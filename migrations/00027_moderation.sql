-- Issue #28: moderation. Roles, suspension, hidden articles and comments, blocks, reports grouped
-- into cases, an append-only moderation log, and notices that say something beyond an article.

-- +goose Up
ALTER TABLE users
    ADD COLUMN role TEXT NOT NULL DEFAULT 'user',
    -- A suspension is in force while suspended_until > now(); 9999-12-31 when it has no end.
    ADD COLUMN suspended_until TIMESTAMPTZ,
    ADD COLUMN suspension_reason TEXT NOT NULL DEFAULT '';
-- NOT VALID, then VALIDATE: the checks do not scan the tables under the ALTER's exclusive lock.
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('user', 'moderator', 'admin')) NOT VALID;
ALTER TABLE users VALIDATE CONSTRAINT users_role_check;

-- A hidden article has status 'hidden', so everything that shows published articles (lists,
-- counts, tags, search, the hot list, notifications, feeds) drops it through the machinery a
-- withdrawal uses. hidden_status keeps the status its author gave it: a publish or withdraw of a
-- hidden article changes only that, and an unhide restores it. hidden_reason is the moderator's
-- reason; an article hidden only because its author is suspended has none.
ALTER TABLE articles
    DROP CONSTRAINT articles_status_check,
    ADD COLUMN hidden_status TEXT,
    ADD COLUMN hidden_reason TEXT,
    ADD COLUMN hidden_at TIMESTAMPTZ;
ALTER TABLE articles ADD CONSTRAINT articles_status_check
    CHECK (status IN ('draft', 'published', 'withdrawn', 'hidden')) NOT VALID;
ALTER TABLE articles VALIDATE CONSTRAINT articles_status_check;
ALTER TABLE articles ADD CONSTRAINT articles_hidden_status_check CHECK (
    (status = 'hidden') = (hidden_status IS NOT NULL)
    AND (hidden_status IS NULL OR hidden_status IN ('draft', 'published', 'withdrawn'))) NOT VALID;
ALTER TABLE articles VALIDATE CONSTRAINT articles_hidden_status_check;

ALTER TABLE comments
    ADD COLUMN hidden_reason TEXT,
    ADD COLUMN hidden_at TIMESTAMPTZ;

-- Who blocked whom. "Whom did I block" is the primary key's prefix; "who blocked me" (a follow or
-- a comment checks it) the second index.
CREATE TABLE user_blocks (
    blocker_id BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    blocked_id BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (blocker_id, blocked_id),
    CONSTRAINT user_blocks_not_self CHECK (blocker_id <> blocked_id)
);
CREATE INDEX user_blocks_blocked_idx ON user_blocks (blocked_id, blocker_id);
CREATE INDEX user_blocks_recent_idx ON user_blocks (blocker_id, created_at DESC, blocked_id);

-- A case is one reported target (an article, a comment or a user) with its open reports: the
-- moderation queue lists cases, not reports, so a target reported a hundred times is one entry.
-- One open case per target; resolving closes it, and a later report opens a new one.
CREATE TABLE moderation_cases (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target_kind   TEXT        NOT NULL CHECK (target_kind IN ('article', 'comment', 'user')),
    target_id     BIGINT      NOT NULL,
    -- The article a reported comment belongs to (for the queue's link); NULL otherwise.
    article_id    BIGINT,
    status        TEXT        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    report_count  INTEGER     NOT NULL DEFAULT 0,
    reasons       TEXT[]      NOT NULL DEFAULT '{}',
    newest_note   TEXT        NOT NULL DEFAULT '',
    opened_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    resolved_at   TIMESTAMPTZ,
    resolved_by   BIGINT REFERENCES users (id) ON DELETE SET NULL,
    resolution    TEXT CHECK (resolution IN ('hide', 'dismiss', 'gone'))
);
CREATE UNIQUE INDEX moderation_cases_open_target_key ON moderation_cases (target_kind, target_id) WHERE status = 'open';
-- The queue, oldest open case first; the resolved list, newest resolution first.
CREATE INDEX moderation_cases_open_idx ON moderation_cases (opened_at, id) WHERE status = 'open';
CREATE INDEX moderation_cases_resolved_idx ON moderation_cases (resolved_at DESC, id DESC) WHERE status = 'resolved';
CREATE INDEX moderation_cases_resolved_by_idx ON moderation_cases (resolved_by) WHERE resolved_by IS NOT NULL;

CREATE TABLE reports (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    case_id     BIGINT      NOT NULL REFERENCES moderation_cases (id) ON DELETE CASCADE,
    reporter_id BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    reason      TEXT        NOT NULL CHECK (reason IN ('spam', 'abuse', 'illegal', 'other')),
    note        TEXT        NOT NULL DEFAULT '',
    status      TEXT        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    resolved_at TIMESTAMPTZ
);
-- One open report per reporter and case (so per target): a repeat finds it.
CREATE UNIQUE INDEX reports_open_reporter_case_key ON reports (case_id, reporter_id) WHERE status = 'open';
CREATE INDEX reports_case_idx ON reports (case_id, id);
CREATE INDEX reports_reporter_idx ON reports (reporter_id, created_at DESC);

-- Every moderation action, appended and never changed: names are copied in, so the log outlives
-- the accounts and content it speaks of. The triggers below refuse UPDATE and DELETE (TRUNCATE by
-- an operator stays possible); the retention job has no rule for it.
CREATE TABLE moderation_log (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor_id     BIGINT,
    actor_name   TEXT        NOT NULL,
    action       TEXT        NOT NULL,
    target_kind  TEXT        NOT NULL,
    target_id    BIGINT      NOT NULL,
    target_label TEXT        NOT NULL,
    reason       TEXT        NOT NULL DEFAULT '',
    at           TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX moderation_log_recent_idx ON moderation_log (at DESC, id DESC);

-- +goose StatementBegin
CREATE FUNCTION moderation_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'moderation_log is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER moderation_log_no_update BEFORE UPDATE OR DELETE ON moderation_log
    FOR EACH ROW EXECUTE FUNCTION moderation_log_append_only();

-- Notices (content hidden or restored, a report resolved) say what they are about in words: the
-- content they name may be hidden from the reader, or gone.
ALTER TABLE notifications ADD COLUMN detail TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE notifications DROP COLUMN detail;
DROP TABLE moderation_log;
DROP FUNCTION moderation_log_append_only();
DROP TABLE reports;
DROP TABLE moderation_cases;
DROP TABLE user_blocks;
ALTER TABLE comments DROP COLUMN hidden_at, DROP COLUMN hidden_reason;
-- Hidden articles go back to the status their author gave them.
ALTER TABLE articles DROP CONSTRAINT articles_hidden_status_check;
UPDATE articles SET status = hidden_status WHERE status = 'hidden';
ALTER TABLE articles DROP CONSTRAINT articles_status_check;
ALTER TABLE articles
    DROP COLUMN hidden_at, DROP COLUMN hidden_reason, DROP COLUMN hidden_status,
    ADD CONSTRAINT articles_status_check CHECK (status IN ('draft', 'published', 'withdrawn'));
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users DROP COLUMN suspension_reason, DROP COLUMN suspended_until, DROP COLUMN role;
