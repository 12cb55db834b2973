-- Issue #33, webhooks: events are fanned out to endpoints in the transaction of the write that
-- makes them, by triggers, no longer by a consumer of the outbox stream after the fact.
--
-- Why in the write's transaction: a delivery is numbered (webhooks.next_seq) under its endpoint's
-- row lock, and that lock is now held until the write commits, so an endpoint's deliveries are
-- numbered in the order their writes commit, on any number of instances. Numbered later, by
-- whichever instance's consumer read the event first, two events could take each other's place.
--
-- Why triggers: every write that makes an event passes here, whatever path it took (a request, a
-- batch of comments in one statement, the scheduled publish job, a moderator's restore), and a
-- write no endpoint listens to pays one index probe on webhooks.
--
-- The body is the resource as the API renders it to an anonymous reader, as of the commit (so a
-- retry days later still sends what happened): an article as GET /api/articles/:slug renders it
-- minus bodyHtml (the receiver has the Markdown body), a comment as the comments list renders it,
-- profiles as GET /api/profiles/:username. repository/webhooks tests compare these shapes with
-- the API's.

-- +goose Up
-- +goose StatementBegin
-- The API's timestamp form: UTC, exactly three fractional digits (web/timestamp.go).
CREATE OR REPLACE FUNCTION webhook_ts(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- A profile as an anonymous reader sees it; an empty profile for no one (a placeholder's author).
CREATE OR REPLACE FUNCTION webhook_profile(uid bigint) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT COALESCE(
        (SELECT json_build_object('username', u.username, 'bio', u.bio, 'image', u.image, 'following', false)
         FROM users u WHERE u.id = uid),
        json_build_object('username', '', 'bio', '', 'image', '', 'following', false))
$$;

-- An article as GET /api/articles/:slug renders it to an anonymous reader, minus bodyHtml;
-- counters as the database holds them. coverImage is left out when there is none, as the API does.
CREATE OR REPLACE FUNCTION webhook_article(aid bigint) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_strip_nulls(json_build_object(
        'slug', a.slug, 'title', a.title, 'description', a.description, 'body', a.body,
        'tagList', to_json(ARRAY(SELECT t FROM unnest(a.tag_list) AS t ORDER BY t COLLATE "C")),
        'createdAt', webhook_ts(a.created_at), 'updatedAt', webhook_ts(a.updated_at),
        'favorited', false, 'favoritesCount', COALESCE(c.likes, 0),
        'author', webhook_profile(a.author_id),
        'status', a.status, 'version', a.version,
        'readsCount', COALESCE(c.reads, 0), 'collected', false, 'collectsCount', COALESCE(c.collects, 0),
        'coverImage', NULLIF(a.cover_image, '')))
    FROM articles a
    LEFT JOIN LATERAL (
        SELECT sum(i.like_cnt)::bigint AS likes, sum(i.read_cnt)::bigint AS reads, sum(i.collect_cnt)::bigint AS collects
        FROM interactives i WHERE i.biz = 'article' AND i.biz_id = a.id
    ) c ON true
    WHERE a.id = aid
$$;

-- A comment as the comments list renders it to an anonymous reader.
CREATE OR REPLACE FUNCTION webhook_comment(cid bigint) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_build_object(
        'id', c.id, 'seq', c.seq, 'createdAt', webhook_ts(c.created_at), 'updatedAt', webhook_ts(c.updated_at),
        'body', c.body, 'author', webhook_profile(c.author_id),
        'parentId', c.parent_id, 'repliesCount', c.replies_count,
        'deleted', c.deleted_at IS NOT NULL, 'edited', c.edited_at IS NOT NULL)
    FROM comments c WHERE c.id = cid
$$;

-- Whether an event of topic for owner (its author, the followed user) has an endpoint to go to:
-- the owner's that take the topic, or the site's. One probe of webhooks_owner_idx.
CREATE OR REPLACE FUNCTION webhook_wanted(p_topic text, p_owner bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM webhooks
                   WHERE active AND p_topic = ANY (events) AND (owner_id = p_owner OR owner_id IS NULL))
$$;

-- Adds one delivery of the event to every active endpoint that takes it, each numbered under its
-- endpoint's row lock (taken in id order, so two writes never wait on each other in a circle), and
-- enqueues the webhook_deliver job of a delivery that is its endpoint's lowest pending one (a
-- later one is enqueued when the one ahead of it finishes: repository/webhooks Store.Record).
-- The job is the one durable.EnqueueTx would write (queue webhooks, kind webhook_deliver,
-- unique key delivery:<id>, domain.WebhookRetry's 16 attempts), and wakes the queue at commit.
-- Idempotent per (endpoint, event id).
CREATE OR REPLACE FUNCTION webhook_emit(p_topic text, p_owner bigint, p_event_id text, p_data json, p_traceparent text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    hook record;
    v_seq bigint;
    v_delivery bigint;
    v_body text := json_build_object('type', p_topic, 'timestamp', webhook_ts(now()), 'data', p_data)::text;
BEGIN
    FOR hook IN
        SELECT id FROM webhooks
        WHERE active AND p_topic = ANY (events) AND (owner_id = p_owner OR owner_id IS NULL)
        ORDER BY id
        FOR UPDATE
    LOOP
        UPDATE webhooks SET next_seq = next_seq + 1 WHERE id = hook.id RETURNING next_seq INTO v_seq;
        v_delivery := NULL;
        INSERT INTO webhook_deliveries (webhook_id, seq, event_id, event_type, body)
        VALUES (hook.id, v_seq, p_event_id, p_topic, v_body)
        ON CONFLICT (webhook_id, event_id) DO NOTHING
        RETURNING id INTO v_delivery;
        CONTINUE WHEN v_delivery IS NULL;
        -- A new statement, so a new snapshot: it sees every delivery committed before the lock was ours.
        IF NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                       WHERE d.webhook_id = hook.id AND d.status = 'pending' AND d.seq < v_seq) THEN
            INSERT INTO jobs (queue, kind, payload, max_attempts, unique_key, traceparent)
            VALUES ('webhooks', 'webhook_deliver', json_build_object('delivery', v_delivery)::jsonb, 16,
                    'delivery:' || v_delivery, NULLIF(p_traceparent, ''))
            ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL DO NOTHING;
            PERFORM pg_notify('inkwell_jobs', 'webhooks');
        END IF;
    END LOOP;
END
$$;

-- article.published, article.updated, article.withdrawn: the outbox row the write adds
-- (durable.WriteArticleEvent) is the event; its id names it.
CREATE OR REPLACE FUNCTION webhook_on_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    author bigint;
BEGIN
    SELECT author_id INTO author FROM articles WHERE id = NEW.aggregate_id;
    IF author IS NOT NULL AND webhook_wanted(NEW.topic, author) THEN
        PERFORM webhook_emit(NEW.topic, author, 'outbox-' || NEW.id,
                             json_build_object('article', webhook_article(NEW.aggregate_id)), NEW.traceparent);
    END IF;
    RETURN NULL;
END
$$;

-- comment.created, to the endpoints of the article's author and the site's.
CREATE OR REPLACE FUNCTION webhook_on_comment() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    art record;
BEGIN
    SELECT id, slug, title, author_id INTO art FROM articles WHERE id = NEW.article_id;
    IF art.id IS NOT NULL AND webhook_wanted('comment.created', art.author_id) THEN
        PERFORM webhook_emit('comment.created', art.author_id, 'comment-' || NEW.id,
                             json_build_object('comment', webhook_comment(NEW.id),
                                               'article', json_build_object('slug', art.slug, 'title', art.title)), NULL);
    END IF;
    RETURN NULL;
END
$$;

-- follower.added, to the endpoints of the followed user and the site's. A follow after an
-- unfollow is a new event (the transaction's id tells them apart).
CREATE OR REPLACE FUNCTION webhook_on_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF webhook_wanted('follower.added', NEW.followee_id) THEN
        PERFORM webhook_emit('follower.added', NEW.followee_id,
                             'follow-' || NEW.follower_id || '-' || NEW.followee_id || '-' || txid_current(),
                             json_build_object('follower', webhook_profile(NEW.follower_id),
                                               'profile', webhook_profile(NEW.followee_id)), NULL);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER IF EXISTS webhook_on_outbox ON outbox;
CREATE TRIGGER webhook_on_outbox AFTER INSERT ON outbox FOR EACH ROW
    WHEN (NEW.topic IN ('article.published', 'article.updated', 'article.withdrawn'))
    EXECUTE FUNCTION webhook_on_outbox();
DROP TRIGGER IF EXISTS webhook_on_comment ON comments;
CREATE TRIGGER webhook_on_comment AFTER INSERT ON comments FOR EACH ROW EXECUTE FUNCTION webhook_on_comment();
DROP TRIGGER IF EXISTS webhook_on_follow ON follows;
CREATE TRIGGER webhook_on_follow AFTER INSERT ON follows FOR EACH ROW EXECUTE FUNCTION webhook_on_follow();

-- +goose Down
DROP TRIGGER IF EXISTS webhook_on_follow ON follows;
DROP TRIGGER IF EXISTS webhook_on_comment ON comments;
DROP TRIGGER IF EXISTS webhook_on_outbox ON outbox;
DROP FUNCTION IF EXISTS webhook_on_follow();
DROP FUNCTION IF EXISTS webhook_on_comment();
DROP FUNCTION IF EXISTS webhook_on_outbox();
DROP FUNCTION IF EXISTS webhook_emit(text, bigint, text, json, text);
DROP FUNCTION IF EXISTS webhook_wanted(text, bigint);
DROP FUNCTION IF EXISTS webhook_comment(bigint);
DROP FUNCTION IF EXISTS webhook_article(bigint);
DROP FUNCTION IF EXISTS webhook_profile(bigint);
DROP FUNCTION IF EXISTS webhook_ts(timestamptz);
