-- +goose Up
-- Lists whose cost does not grow with the data (docs/ARCHITECTURE.md, "Lists and counts").
--
-- Every list walks an index in its own order and stops after one page. The filters that cannot
-- be read straight off an articles index get a projection, an ordered copy of the keys:
-- article_tags (?tag=) and favorite_articles (?favorited=), each holding published articles only.
-- Every articlesCount of a single filter is one row of a counts table. Triggers keep the
-- projections and counts in the same transaction as the write that changes them, for every
-- writer there is (the API, cascades, `inkwell seed`'s COPY): a code path that forgot one would
-- make a count drift for ever, a trigger cannot be forgotten. They are statement-level, with
-- transition tables, so a COPY of 50,000 rows costs a handful of set-based statements rather
-- than 50,000 trigger calls.

-- The site's count in 16 slots (an article counts in slot id % 16), summed on read: every
-- publish, withdrawal and delete changes it, and one row would queue them all on its lock.
CREATE TABLE site_article_counts (
    slot      SMALLINT PRIMARY KEY CHECK (slot >= 0 AND slot < 16),
    published BIGINT   NOT NULL DEFAULT 0
);

-- No foreign keys on the counts: a row of zeros outliving its user or tag is harmless, while a
-- foreign key would order a cascade's deletes against the triggers' upserts.
-- version moves with every change of what the author's published articles show in a list
-- (one published, withdrawn, deleted, retitled, retagged): a reader's cached feed page is keyed by
-- the versions of the authors they follow (ArticleFeedStamp).
CREATE TABLE author_article_counts (
    author_id BIGINT PRIMARY KEY,
    drafts    BIGINT NOT NULL DEFAULT 0,
    published BIGINT NOT NULL DEFAULT 0,
    withdrawn BIGINT NOT NULL DEFAULT 0,
    version   BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE tag_article_counts (
    tag       TEXT PRIMARY KEY,
    published BIGINT NOT NULL DEFAULT 0
);
-- The tag cloud: the most used tags, read straight off this index.
CREATE INDEX tag_article_counts_popular_idx ON tag_article_counts (published DESC, tag) WHERE published > 0;

CREATE TABLE user_favorite_counts (
    user_id   BIGINT PRIMARY KEY,
    favorites BIGINT NOT NULL DEFAULT 0
);

-- ?tag=: a tag's published articles, newest first, as the global list orders them.
CREATE TABLE article_tags (
    tag        TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    -- Checked at commit, not cascaded: the delete trigger removes an article's rows itself,
    -- and counts what it removed (a cascade would remove them first, uncounted).
    article_id BIGINT      NOT NULL REFERENCES articles (id) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (tag, created_at, article_id)
);
CREATE INDEX article_tags_article_idx ON article_tags (article_id);

-- ?favorited=: the published articles a user likes, ordered as the global list is.
CREATE TABLE favorite_articles (
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    article_id BIGINT      NOT NULL REFERENCES articles (id) DEFERRABLE INITIALLY DEFERRED, -- as article_tags
    PRIMARY KEY (user_id, created_at, article_id)
);
CREATE INDEX favorite_articles_article_idx ON favorite_articles (article_id);

-- ?author= and the feed: an author's articles of one status, newest first. The feed reads only
-- (created_at, id) from it, so its per-author probes are index-only.
-- An author's own list merges the three status lists, so the index of all statuses goes.
CREATE INDEX articles_author_status_idx ON articles (author_id, status, created_at DESC, id DESC);
DROP INDEX articles_author_idx;
-- Deleting an article deletes its likes, and a status change finds its likers: both by item.
CREATE INDEX likes_item_idx ON likes (biz, biz_id);
-- The tag filter reads article_tags now; the GIN index only cost every write.
DROP INDEX articles_tags_idx;

-- One changed article as the count triggers see it: sign is +1 for a row as it now is, -1 for a
-- row as it was.
CREATE TYPE article_change AS (
    sign       INTEGER,
    id         BIGINT,
    author_id  BIGINT,
    status     TEXT,
    tag_list   TEXT[],
    created_at TIMESTAMPTZ
);

-- The advisory lock that orders a like against a status change of its article (see
-- likes_counts_apply): likes take it shared, status changes exclusive. Articles share 256 keys,
-- so a bulk statement over many articles takes at most 256 locks (the lock table is small); two
-- articles sharing a key only make a status change of one wait for likes of the other. Two-key
-- form: a key space no single-key advisory lock (the Idempotency-Key lock) shares.
-- +goose StatementBegin
CREATE FUNCTION article_lock_key(id BIGINT) RETURNS INTEGER
LANGUAGE sql IMMUTABLE AS $$ SELECT (id % 256)::integer $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION article_counts_apply(changes article_change[], with_likers BOOLEAN) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- Every row below is locked in key order, so two writers never wait on each other in a
    -- circle.
    INSERT INTO author_article_counts AS c (author_id, drafts, published, withdrawn, version)
    SELECT s.author_id, s.drafts, s.published, s.withdrawn, CASE WHEN s.shown THEN 1 ELSE 0 END
    FROM (SELECT ch.author_id,
                 COALESCE(sum(ch.sign) FILTER (WHERE ch.status = 'draft'), 0) AS drafts,
                 COALESCE(sum(ch.sign) FILTER (WHERE ch.status = 'published'), 0) AS published,
                 COALESCE(sum(ch.sign) FILTER (WHERE ch.status = 'withdrawn'), 0) AS withdrawn,
                 bool_or(ch.status = 'published') AS shown
          FROM unnest(changes) ch
          GROUP BY ch.author_id) s
    WHERE s.drafts <> 0 OR s.published <> 0 OR s.withdrawn <> 0 OR s.shown
    ORDER BY s.author_id
    ON CONFLICT (author_id) DO UPDATE
    SET drafts = c.drafts + EXCLUDED.drafts, published = c.published + EXCLUDED.published,
        withdrawn = c.withdrawn + EXCLUDED.withdrawn, version = c.version + EXCLUDED.version;

    INSERT INTO site_article_counts AS c (slot, published)
    SELECT d.slot, d.n
    FROM (SELECT (ch.id % 16)::smallint AS slot, sum(ch.sign) AS n
          FROM unnest(changes) ch WHERE ch.status = 'published' GROUP BY 1) d
    WHERE d.n <> 0
    ORDER BY d.slot
    ON CONFLICT (slot) DO UPDATE SET published = c.published + EXCLUDED.published;

    -- (article, tag) pairs of published rows: net +1 is a pair to add, -1 one to remove, 0 an
    -- edit that kept the tag.
    WITH d AS (
        SELECT p.id, p.created_at, p.tag, sum(p.sign) AS d
        FROM (SELECT DISTINCT ch.sign, ch.id, ch.created_at, t.tag
              FROM unnest(changes) ch, unnest(ch.tag_list) t(tag)
              WHERE ch.status = 'published') p
        GROUP BY p.id, p.created_at, p.tag
        HAVING sum(p.sign) <> 0
    ), removed AS (
        DELETE FROM article_tags t USING d
        WHERE d.d < 0 AND t.tag = d.tag AND t.created_at = d.created_at AND t.article_id = d.id
    ), added AS (
        INSERT INTO article_tags (tag, created_at, article_id)
        SELECT d.tag, d.created_at, d.id FROM d WHERE d.d > 0
        ORDER BY d.tag, d.created_at, d.id
        ON CONFLICT DO NOTHING
    )
    INSERT INTO tag_article_counts AS c (tag, published)
    SELECT d.tag, sum(d.d) FROM d
    GROUP BY d.tag HAVING sum(d.d) <> 0
    ORDER BY d.tag
    ON CONFLICT (tag) DO UPDATE SET published = c.published + EXCLUDED.published;

    IF with_likers THEN
        PERFORM favorites_follow_status(changes);
    END IF;
END $$;
-- +goose StatementEnd

-- An article that became published or stopped being so (withdrawn, deleted) enters or leaves
-- every liker's favorites. The exclusive lock waits for the likes in flight on it (they hold it
-- shared until they commit), so the likers read next include every committed like, and a like
-- arriving later waits for this transaction and then sees the new status.
-- +goose StatementBegin
CREATE FUNCTION favorites_follow_status(changes article_change[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    flipped BIGINT[];
BEGIN
    SELECT array_agg(f.id ORDER BY f.id) INTO flipped
    FROM (SELECT ch.id FROM unnest(changes) ch WHERE ch.status = 'published'
          GROUP BY ch.id HAVING sum(ch.sign) <> 0) f;
    IF flipped IS NULL THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(1413, s.k)
    FROM (SELECT DISTINCT article_lock_key(u) AS k FROM unnest(flipped) u ORDER BY 1) s;

    WITH f AS (
        SELECT ch.id, max(ch.created_at) AS created_at, sum(ch.sign) AS d
        FROM unnest(changes) ch WHERE ch.status = 'published' AND ch.id = ANY (flipped)
        GROUP BY ch.id
    ), likers AS (
        SELECT l.user_id, f.id, f.created_at, f.d
        FROM f JOIN likes l ON l.biz = 'article' AND l.biz_id = f.id AND l.liked
    ), added AS (
        INSERT INTO favorite_articles (user_id, created_at, article_id)
        SELECT k.user_id, k.created_at, k.id FROM likers k WHERE k.d > 0
        ORDER BY k.user_id, k.created_at, k.id
        ON CONFLICT DO NOTHING
        RETURNING user_id
    ), removed AS (
        DELETE FROM favorite_articles fa USING likers k
        WHERE k.d < 0 AND fa.user_id = k.user_id AND fa.created_at = k.created_at AND fa.article_id = k.id
        RETURNING fa.user_id
    ), per_user AS (
        SELECT x.user_id, sum(x.d)::bigint AS d
        FROM (SELECT user_id, 1 AS d FROM added UNION ALL SELECT user_id, -1 FROM removed) x
        GROUP BY x.user_id
    )
    INSERT INTO user_favorite_counts AS c (user_id, favorites)
    SELECT p.user_id, p.d FROM per_user p WHERE p.d <> 0 ORDER BY p.user_id
    ON CONFLICT (user_id) DO UPDATE SET favorites = c.favorites + EXCLUDED.favorites;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION articles_counts_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- A new article has no likes yet: nothing of favorites to follow.
    PERFORM article_counts_apply(ARRAY(
        SELECT ROW(1, n.id, n.author_id, n.status, n.tag_list, n.created_at)::article_change FROM new_rows n), false);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION articles_counts_after_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Only rows whose counted or listed columns changed: an edit of a body changes nothing here.
    PERFORM article_counts_apply(ARRAY(
        SELECT ROW(s.sign, s.id, s.author_id, s.status, s.tag_list, s.created_at)::article_change
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        CROSS JOIN LATERAL (VALUES
            (-1, o.id, o.author_id, o.status, o.tag_list, o.created_at),
            (1, n.id, n.author_id, n.status, n.tag_list, n.created_at)
        ) s(sign, id, author_id, status, tag_list, created_at)
        WHERE o.status IS DISTINCT FROM n.status OR o.tag_list IS DISTINCT FROM n.tag_list
           OR o.author_id IS DISTINCT FROM n.author_id OR o.created_at IS DISTINCT FROM n.created_at
           OR o.title IS DISTINCT FROM n.title OR o.description IS DISTINCT FROM n.description), true);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION articles_counts_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM article_counts_apply(ARRAY(
        SELECT ROW(-1, o.id, o.author_id, o.status, o.tag_list, o.created_at)::article_change FROM old_rows o), true);
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER articles_counts_insert AFTER INSERT ON articles
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION articles_counts_after_insert();
CREATE TRIGGER articles_counts_update AFTER UPDATE ON articles
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION articles_counts_after_update();
CREATE TRIGGER articles_counts_delete AFTER DELETE ON articles
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION articles_counts_after_delete();

-- A like turned on (+1) or off (-1), per (user, article).
CREATE TYPE like_change AS (user_id BIGINT, article_id BIGINT, d INTEGER);

-- Likes of published articles are favorites. The shared lock on each article orders this like
-- against a status change of it (favorites_follow_status); the status is read after the lock,
-- by a statement of its own, so it is the status as of the lock's grant.
-- +goose StatementBegin
CREATE FUNCTION likes_counts_apply(changes like_change[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(changes) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(1413, s.k)
    FROM (SELECT DISTINCT article_lock_key(c.article_id) AS k FROM unnest(changes) c ORDER BY 1) s;


    WITH c AS (
        SELECT ch.user_id, ch.article_id, a.created_at, sum(ch.d) AS d
        FROM unnest(changes) ch JOIN articles a ON a.id = ch.article_id AND a.status = 'published'
        GROUP BY ch.user_id, ch.article_id, a.created_at
        HAVING sum(ch.d) <> 0
    ), added AS (
        INSERT INTO favorite_articles (user_id, created_at, article_id)
        SELECT c.user_id, c.created_at, c.article_id FROM c WHERE c.d > 0
        ORDER BY c.user_id, c.created_at, c.article_id
        ON CONFLICT DO NOTHING
        RETURNING user_id
    ), removed AS (
        DELETE FROM favorite_articles fa USING c
        WHERE c.d < 0 AND fa.user_id = c.user_id AND fa.created_at = c.created_at AND fa.article_id = c.article_id
        RETURNING fa.user_id
    ), per_user AS (
        SELECT x.user_id, sum(x.d)::bigint AS d
        FROM (SELECT user_id, 1 AS d FROM added UNION ALL SELECT user_id, -1 FROM removed) x
        GROUP BY x.user_id
    )
    INSERT INTO user_favorite_counts AS uc (user_id, favorites)
    SELECT p.user_id, p.d FROM per_user p WHERE p.d <> 0 ORDER BY p.user_id
    ON CONFLICT (user_id) DO UPDATE SET favorites = uc.favorites + EXCLUDED.favorites;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION likes_counts_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM likes_counts_apply(ARRAY(
        SELECT ROW(n.user_id, n.biz_id, 1)::like_change FROM new_rows n WHERE n.biz = 'article' AND n.liked));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION likes_counts_after_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM likes_counts_apply(ARRAY(
        SELECT ROW(n.user_id, n.biz_id, CASE WHEN n.liked THEN 1 ELSE -1 END)::like_change
        FROM old_rows o JOIN new_rows n ON n.user_id = o.user_id AND n.biz = o.biz AND n.biz_id = o.biz_id
        WHERE n.biz = 'article' AND o.liked IS DISTINCT FROM n.liked));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION likes_counts_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM likes_counts_apply(ARRAY(
        SELECT ROW(o.user_id, o.biz_id, -1)::like_change FROM old_rows o WHERE o.biz = 'article' AND o.liked));
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER likes_counts_insert AFTER INSERT ON likes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION likes_counts_after_insert();
CREATE TRIGGER likes_counts_update AFTER UPDATE ON likes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION likes_counts_after_update();
CREATE TRIGGER likes_counts_delete AFTER DELETE ON likes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION likes_counts_after_delete();

-- A folder's article count, kept with its items (the folder list showed a count(*) per folder).
ALTER TABLE collections ADD COLUMN article_count BIGINT NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION collections_count_apply(changes BIGINT[], signs INTEGER[]) RETURNS void
LANGUAGE sql AS $$
    UPDATE collections c SET article_count = c.article_count + d.n
    FROM (SELECT z.id, sum(z.sign) AS n FROM unnest(changes, signs) z(id, sign) GROUP BY z.id) d
    WHERE c.id = d.id AND d.n <> 0
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION collection_items_count_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM collections_count_apply(ARRAY(SELECT n.collection_id FROM new_rows n),
                                    ARRAY(SELECT 1 FROM new_rows n));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION collection_items_count_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM collections_count_apply(ARRAY(SELECT o.collection_id FROM old_rows o),
                                    ARRAY(SELECT -1 FROM old_rows o));
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER collection_items_count_insert AFTER INSERT ON collection_items
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION collection_items_count_after_insert();
CREATE TRIGGER collection_items_count_delete AFTER DELETE ON collection_items
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION collection_items_count_after_delete();

-- The data already there, counted once.
UPDATE collections c SET article_count = (SELECT count(*) FROM collection_items i WHERE i.collection_id = c.id);
INSERT INTO site_article_counts (slot, published)
SELECT (id % 16)::smallint, count(*) FROM articles WHERE status = 'published' GROUP BY 1;
INSERT INTO author_article_counts (author_id, drafts, published, withdrawn)
SELECT author_id, count(*) FILTER (WHERE status = 'draft'), count(*) FILTER (WHERE status = 'published'),
       count(*) FILTER (WHERE status = 'withdrawn')
FROM articles GROUP BY author_id;
INSERT INTO article_tags (tag, created_at, article_id)
SELECT DISTINCT t.tag, a.created_at, a.id FROM articles a, unnest(a.tag_list) t(tag) WHERE a.status = 'published';
INSERT INTO tag_article_counts (tag, published) SELECT tag, count(*) FROM article_tags GROUP BY tag;
INSERT INTO favorite_articles (user_id, created_at, article_id)
SELECT l.user_id, a.created_at, a.id
FROM likes l JOIN articles a ON a.id = l.biz_id AND a.status = 'published'
WHERE l.biz = 'article' AND l.liked;
INSERT INTO user_favorite_counts (user_id, favorites) SELECT user_id, count(*) FROM favorite_articles GROUP BY user_id;

-- +goose Down
DROP TRIGGER collection_items_count_insert ON collection_items;
DROP TRIGGER collection_items_count_delete ON collection_items;
DROP FUNCTION collection_items_count_after_insert(), collection_items_count_after_delete();
DROP FUNCTION collections_count_apply(BIGINT[], INTEGER[]);
ALTER TABLE collections DROP COLUMN article_count;
DROP TRIGGER likes_counts_insert ON likes;
DROP TRIGGER likes_counts_update ON likes;
DROP TRIGGER likes_counts_delete ON likes;
DROP FUNCTION likes_counts_after_insert(), likes_counts_after_update(), likes_counts_after_delete();
DROP FUNCTION likes_counts_apply(like_change[]);
DROP TYPE like_change;
DROP TRIGGER articles_counts_insert ON articles;
DROP TRIGGER articles_counts_update ON articles;
DROP TRIGGER articles_counts_delete ON articles;
DROP FUNCTION articles_counts_after_insert(), articles_counts_after_update(), articles_counts_after_delete();
DROP FUNCTION article_counts_apply(article_change[], BOOLEAN);
DROP FUNCTION favorites_follow_status(article_change[]);
DROP FUNCTION article_lock_key(BIGINT);
DROP TYPE article_change;
CREATE INDEX articles_tags_idx ON articles USING GIN (tag_list);
DROP INDEX likes_item_idx;
CREATE INDEX articles_author_idx ON articles (author_id, created_at DESC, id DESC);
DROP INDEX articles_author_status_idx;
DROP TABLE favorite_articles;
DROP TABLE article_tags;
DROP TABLE user_favorite_counts;
DROP TABLE tag_article_counts;
DROP TABLE author_article_counts;
DROP TABLE site_article_counts;
