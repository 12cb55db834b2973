-- The "did you mean" lexicon follows removals (issue 26). Until now a pass folded each article
-- once, when a watermark moved past its id, and nothing ever subtracted: the words of deleted,
-- withdrawn and edited articles were suggested for ever, and an article published after the pass
-- had looked at it as a draft, or edited, never got its new words in.
--
-- Now every change of what the lexicon counts is a row of search_lexicon_changes, written by
-- triggers in the transaction of the change (whatever wrote it: the API, a cascade from a deleted
-- user, a seed without search), and the lexicon pass (repository.SearchLexicon) folds the rows in,
-- oldest first, and deletes them. Its work is the number of changes, not of articles.
--
--   * "added" (removed = false): the article became published, or its text changed while
--     published. The pass counts the article's text as it reads it, unless a later change of the
--     same article says that text is gone already (then the two cancel).
--   * "removed" (removed = true): a published article's text stopped counting (withdrawn,
--     deleted, or replaced by an edit). The row keeps that text: the article may be gone, or hold
--     another text, by the time the pass subtracts it.
--
-- In one transaction: the triggers' lock on articles keeps writes out until the end, so the
-- articles not folded yet (past the old watermark) are logged exactly once, below.

-- +goose Up
CREATE TABLE search_lexicon_changes (
    id          BIGSERIAL PRIMARY KEY,
    article_id  BIGINT  NOT NULL,
    removed     BOOLEAN NOT NULL,
    -- The text that stops counting (removed rows only).
    title       TEXT,
    description TEXT,
    body        TEXT,
    CHECK (removed = (body IS NOT NULL))
);
-- A pass settles every change of an article together (an added text and its removal cancel).
CREATE INDEX search_lexicon_changes_article_idx ON search_lexicon_changes (article_id, id);

-- +goose StatementBegin
-- New published articles. A writer that counts the words of what it inserts itself (inkwell
-- seed, SearchLexicon.FoldCounted) sets inkwell.lexicon_insert_counted to on for its transaction.
CREATE FUNCTION inkwell_lexicon_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('inkwell.lexicon_insert_counted', true) IS DISTINCT FROM 'on' THEN
        INSERT INTO search_lexicon_changes (article_id, removed)
        SELECT n.id, false FROM lexicon_new n WHERE n.status = 'published' ORDER BY n.id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- A published text that stops counting and, when the article is published after the change, its
-- new text: in this order, so the pass can pair them.
CREATE FUNCTION inkwell_lexicon_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'published' THEN
        INSERT INTO search_lexicon_changes (article_id, removed, title, description, body)
        VALUES (OLD.id, true, OLD.title, OLD.description, OLD.body);
    END IF;
    IF NEW.status = 'published' THEN
        INSERT INTO search_lexicon_changes (article_id, removed) VALUES (NEW.id, false);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION inkwell_lexicon_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_lexicon_changes (article_id, removed, title, description, body)
    SELECT o.id, true, o.title, o.description, o.body FROM lexicon_old o WHERE o.status = 'published' ORDER BY o.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- Statement-level for inserts and deletes (a seed's batch, a user's cascade: one set-based
-- insert); row-level for updates, which only a few statements make and which need OLD and NEW
-- side by side. The WHEN keeps updates that change neither the status nor the text (the search
-- backfill, version bumps) free of any work.
CREATE TRIGGER articles_lexicon_inserted AFTER INSERT ON articles
    REFERENCING NEW TABLE AS lexicon_new
    FOR EACH STATEMENT EXECUTE FUNCTION inkwell_lexicon_inserted();
CREATE TRIGGER articles_lexicon_updated AFTER UPDATE OF title, description, body, status ON articles
    FOR EACH ROW
    WHEN ((OLD.status = 'published' OR NEW.status = 'published')
          AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.title IS DISTINCT FROM NEW.title
               OR OLD.description IS DISTINCT FROM NEW.description OR OLD.body IS DISTINCT FROM NEW.body))
    EXECUTE FUNCTION inkwell_lexicon_updated();
CREATE TRIGGER articles_lexicon_deleted AFTER DELETE ON articles
    REFERENCING OLD TABLE AS lexicon_old
    FOR EACH STATEMENT EXECUTE FUNCTION inkwell_lexicon_deleted();

-- Published articles the old pass had not reached yet (the last minutes' worth) are logged as
-- added. The watermark then goes to the end of the id range, so an instance of the previous
-- version (a rolling upgrade) runs its pass, finds nothing past it, and folds nothing twice.
INSERT INTO search_lexicon_changes (article_id, removed)
SELECT a.id, false FROM articles a
WHERE a.id > (SELECT article_watermark FROM search_lexicon_state WHERE id) AND a.status = 'published'
ORDER BY a.id;
UPDATE search_lexicon_state SET article_watermark = 9223372036854775807 WHERE id;

-- +goose Down
DROP TRIGGER IF EXISTS articles_lexicon_deleted ON articles;
DROP TRIGGER IF EXISTS articles_lexicon_updated ON articles;
DROP TRIGGER IF EXISTS articles_lexicon_inserted ON articles;
DROP FUNCTION IF EXISTS inkwell_lexicon_deleted();
DROP FUNCTION IF EXISTS inkwell_lexicon_updated();
DROP FUNCTION IF EXISTS inkwell_lexicon_inserted();
-- The previous version's pass goes on after the last article. Changes not folded yet are lost:
-- their words stay missing, or stay counted, as that version leaves every change.
UPDATE search_lexicon_state SET article_watermark = (SELECT coalesce(max(id), 0) FROM articles) WHERE id;
DROP TABLE IF EXISTS search_lexicon_changes;
