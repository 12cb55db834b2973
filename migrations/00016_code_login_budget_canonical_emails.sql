-- +goose Up
-- Canonical emails (issue #15): emails are stored as typed and unique on their canonical form,
-- NFKC-normalized and case-folded (service.CanonicalEmail computes it for new rows; lookups compare
-- it). Existing rows get lower(normalize(email, NFKC)), which is what Go computes for every address
-- the old code accepted (it stored emails lower-cased). Rows that collide on the canonical form
-- (look-alike accounts made before this migration) keep their email; the oldest keeps the
-- canonical form, the others get 'duplicate:<id>:<canonical>', which no valid address equals, so
-- email login and code login reach the oldest account only until an operator merges them.
ALTER TABLE users ADD COLUMN email_canonical TEXT;
UPDATE users u
SET email_canonical = CASE WHEN u.id = ranked.first_id THEN ranked.canonical
                           ELSE 'duplicate:' || u.id || ':' || ranked.canonical END
FROM (
    SELECT id, lower(normalize(email, NFKC)) AS canonical,
           min(id) OVER (PARTITION BY lower(normalize(email, NFKC))) AS first_id
    FROM users
) AS ranked
WHERE u.id = ranked.id;
ALTER TABLE users ALTER COLUMN email_canonical SET NOT NULL;
DROP INDEX users_email_key;
CREATE UNIQUE INDEX users_email_key ON users (email_canonical);

-- The application always sets email_canonical (Go computes it, locale-free); rows inserted by
-- hand or by fixtures without it get the same approximation as the backfill above.
-- +goose StatementBegin
CREATE FUNCTION users_fill_email_canonical() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.email_canonical IS NULL THEN
        NEW.email_canonical := lower(normalize(NEW.email, NFKC));
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER users_fill_email_canonical BEFORE INSERT ON users
    FOR EACH ROW EXECUTE FUNCTION users_fill_email_canonical();

-- Jobs whose payload must not outlive them (send_code carries a sealed login code) are deleted
-- when done instead of kept as 'done'.
ALTER TABLE jobs ADD COLUMN delete_when_done BOOLEAN NOT NULL DEFAULT false;

-- The PostgreSQL fallback of the one-time code store, used while Redis is unavailable (see
-- repository/codes.go). Codes are HMAC-SHA256 hashes, never plain; a used code stays (spent) until
-- it expires, so it keeps its resend window.
CREATE TABLE login_codes (
    target        TEXT        PRIMARY KEY,
    code_hash     TEXT        NOT NULL,
    attempts_left INT         NOT NULL,
    spent         BOOLEAN     NOT NULL DEFAULT false,
    sent_at       TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL
);

-- Fixed-window counters of the fallback: 'fails:<target>', 'sends:<target>' and 'global'.
CREATE TABLE login_code_meters (
    key         TEXT        PRIMARY KEY,
    hits        INT         NOT NULL,
    window_ends TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE login_code_meters;
DROP TABLE login_codes;
ALTER TABLE jobs DROP COLUMN delete_when_done;
DROP TRIGGER users_fill_email_canonical ON users;
DROP FUNCTION users_fill_email_canonical();
DROP INDEX users_email_key;
ALTER TABLE users DROP COLUMN email_canonical;
CREATE UNIQUE INDEX users_email_key ON users (email);
