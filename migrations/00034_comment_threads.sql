-- +goose NO TRANSACTION
-- Issue #32, threaded comments (docs/API.md, "Threaded comments"). A comment may answer another of
-- the same article: parent_id names the comment it answers, root_id its top-level ancestor (itself
-- at the top level), depth is 1 at the top level and at most 3. The columns are nullable or have
-- defaults, so every existing comment is a top-level comment. Loops are impossible by
-- construction: a reply names a parent that already exists (checked under the parent's row lock,
-- same article), so every parent is older than its replies.
--
-- replies_count (direct replies) is kept by triggers in the transaction of the insert or delete
-- that changes it, for every writer (the API, an account's erasure, an article's cascade).
-- A deleted comment that has replies stays as a placeholder: deleted_at set, body empty and
-- author_id NULL (so an erased account leaves no trace in it). edited_at marks an edited body.
--
-- Without a transaction, so the replies index is built CONCURRENTLY; every statement is
-- idempotent, so a failed run is simply run again.

-- +goose Up
ALTER TABLE comments
    ALTER COLUMN author_id DROP NOT NULL,
    ADD COLUMN IF NOT EXISTS parent_id BIGINT,
    ADD COLUMN IF NOT EXISTS root_id BIGINT,
    ADD COLUMN IF NOT EXISTS depth SMALLINT NOT NULL DEFAULT 1,
    ADD COLUMN IF NOT EXISTS replies_count INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS deleted_at TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS edited_at TIMESTAMPTZ;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION comments_thread_root() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The identity is assigned before BEFORE triggers run: a top-level comment is its own root.
    NEW.root_id := COALESCE(NEW.root_id, NEW.id);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
DROP TRIGGER IF EXISTS comments_thread_root ON comments;
CREATE TRIGGER comments_thread_root BEFORE INSERT ON comments
    FOR EACH ROW EXECUTE FUNCTION comments_thread_root();

-- Statement-level with transition tables, like the list counts (00013): a batch costs one update
-- per parent, in id order (the row locks are taken in one order by every writer).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION comments_replies_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE comments c SET replies_count = c.replies_count + n.cnt
    FROM (SELECT parent_id, count(*) AS cnt FROM new_rows WHERE parent_id IS NOT NULL GROUP BY parent_id ORDER BY parent_id) n
    WHERE c.id = n.parent_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION comments_replies_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE comments c SET replies_count = c.replies_count - n.cnt
    FROM (SELECT parent_id, count(*) AS cnt FROM old_rows WHERE parent_id IS NOT NULL GROUP BY parent_id ORDER BY parent_id) n
    WHERE c.id = n.parent_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
DROP TRIGGER IF EXISTS comments_replies_added ON comments;
CREATE TRIGGER comments_replies_added AFTER INSERT ON comments
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION comments_replies_added();
DROP TRIGGER IF EXISTS comments_replies_removed ON comments;
CREATE TRIGGER comments_replies_removed AFTER DELETE ON comments
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION comments_replies_removed();

-- Existing comments are top level: their own roots. Rows inserted meanwhile get it from the trigger.
UPDATE comments SET root_id = id WHERE root_id IS NULL;

-- One comment's direct replies, in order (?parent=ID, keyset on id); also what the parent_id
-- foreign key checks when a comment is deleted.
DROP INDEX CONCURRENTLY IF EXISTS comments_replies_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS comments_replies_idx ON comments (parent_id, id) WHERE parent_id IS NOT NULL;

-- Checked at commit: an article's cascade deletes replies and parents in one statement, in any order.
ALTER TABLE comments DROP CONSTRAINT IF EXISTS comments_parent_fkey;
ALTER TABLE comments ADD CONSTRAINT comments_parent_fkey FOREIGN KEY (parent_id) REFERENCES comments (id)
    DEFERRABLE INITIALLY DEFERRED NOT VALID;
ALTER TABLE comments VALIDATE CONSTRAINT comments_parent_fkey;
ALTER TABLE comments DROP CONSTRAINT IF EXISTS comments_thread_check;
ALTER TABLE comments ADD CONSTRAINT comments_thread_check CHECK (
    depth BETWEEN 1 AND 3 AND (parent_id IS NULL) = (depth = 1) AND replies_count >= 0
    AND (deleted_at IS NULL) = (author_id IS NOT NULL)) NOT VALID;
ALTER TABLE comments VALIDATE CONSTRAINT comments_thread_check;

-- +goose Down
ALTER TABLE comments DROP CONSTRAINT IF EXISTS comments_thread_check;
ALTER TABLE comments DROP CONSTRAINT IF EXISTS comments_parent_fkey;
DROP INDEX CONCURRENTLY IF EXISTS comments_replies_idx;
DROP TRIGGER IF EXISTS comments_replies_removed ON comments;
DROP TRIGGER IF EXISTS comments_replies_added ON comments;
DROP TRIGGER IF EXISTS comments_thread_root ON comments;
DROP FUNCTION IF EXISTS comments_replies_removed();
DROP FUNCTION IF EXISTS comments_replies_added();
DROP FUNCTION IF EXISTS comments_thread_root();
-- Placeholders have no author to give back; replies become top-level comments.
DELETE FROM comments WHERE deleted_at IS NOT NULL;
ALTER TABLE comments
    DROP COLUMN IF EXISTS edited_at,
    DROP COLUMN IF EXISTS deleted_at,
    DROP COLUMN IF EXISTS replies_count,
    DROP COLUMN IF EXISTS depth,
    DROP COLUMN IF EXISTS root_id,
    DROP COLUMN IF EXISTS parent_id,
    ALTER COLUMN author_id SET NOT NULL;
