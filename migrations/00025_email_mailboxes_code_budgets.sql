-- +goose NO TRANSACTION
-- Issue #26: one account per mailbox, and code budgets an attacker cannot turn against the owner.
-- Every statement is idempotent: without a transaction, a failed run is simply run again.
--
-- Emails: email_canonical was NFKC plus full Unicode case folding, which made different mailboxes
-- one account ("v@straße.de" and "v@strasse.de" are different domains; "ς" and "σ" different
-- local parts). The rule is now the mailbox (service.CanonicalEmail): the domain as IDNA (UTS 46)
-- ASCII, the local part exactly but for ASCII case and NFC. Both rules give the same result for an
-- all-ASCII address, so only accounts with a non-ASCII email can change, and IDNA cannot be
-- computed in SQL: the server rechecks those accounts in Go (repository.UserRepository.RecheckEmails,
-- at start and every few minutes, also for rows an instance of an older version writes during a
-- rolling upgrade). email_canonical_checked is false for a row whose canonical form has not been
-- recomputed since its email was written; the recheck sets it. Until then a lookup never returns
-- such a row for another mailbox (repository.GetByEmail compares the row's own email under the
-- rule). A row whose recomputed form another account holds already keeps its email and gets
-- 'duplicate:<id>:<canonical>' (as 00016 did): nothing is merged, and `inkwell users collisions`
-- lists it, with every group of accounts the old rule made one address.

-- +goose Up
ALTER TABLE users ADD COLUMN IF NOT EXISTS email_canonical_checked BOOLEAN NOT NULL DEFAULT false;

-- Any write of a new email (by this version or an older one) asks for a recheck.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION users_email_recheck() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.email_canonical_checked := false;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE OR REPLACE TRIGGER users_email_recheck BEFORE UPDATE OF email ON users
    FOR EACH ROW WHEN (NEW.email IS DISTINCT FROM OLD.email) EXECUTE FUNCTION users_email_recheck();

-- The rows the two rules may disagree on (a non-ASCII email) and the rows that lost their address
-- to another account: the recheck's work list (checked = false) and the collisions listing.
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_email_recheck_idx ON users (email_canonical_checked, id)
    WHERE octet_length(email) <> char_length(email) OR email_canonical LIKE 'duplicate:%';

-- Code budgets. A login code sent while its target's failure budget is used up is a strong one
-- (50 bits, like an account code): it cannot be guessed, so the lock does not apply to it and
-- wrong guesses do not burn it. This is the PostgreSQL fallback's copy of the Redis field.
ALTER TABLE login_codes ADD COLUMN IF NOT EXISTS strong BOOLEAN NOT NULL DEFAULT false;

-- Wrong guesses of an account code (verification, reset) counted per client (its IP address):
-- a client that guessed wrong five times may not try that code again, but the owner, elsewhere,
-- still can. A new code starts them again.
CREATE TABLE IF NOT EXISTS account_code_misses (
    user_id BIGINT  NOT NULL,
    purpose TEXT    NOT NULL,
    client  TEXT    NOT NULL,
    misses  INTEGER NOT NULL,
    PRIMARY KEY (user_id, purpose, client),
    FOREIGN KEY (user_id, purpose) REFERENCES account_codes (user_id, purpose) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE IF EXISTS account_code_misses;
ALTER TABLE login_codes DROP COLUMN IF EXISTS strong;
DROP INDEX CONCURRENTLY IF EXISTS users_email_recheck_idx;
DROP TRIGGER IF EXISTS users_email_recheck ON users;
DROP FUNCTION IF EXISTS users_email_recheck();
ALTER TABLE users DROP COLUMN IF EXISTS email_canonical_checked;
-- Back to 00016's approximation of the old rule for the non-ASCII emails the recheck changed:
-- first out of the way (so no row waits on another's old form), then lower(NFKC), and a row whose
-- form another holds gets 'duplicate:<id>:<form>' (the oldest keeps it), as in 00016.
UPDATE users SET email_canonical = 'down00025:' || id
WHERE octet_length(email) <> char_length(email) AND email_canonical NOT LIKE 'duplicate:%';
UPDATE users u
SET email_canonical = CASE WHEN r.n = 1 AND NOT EXISTS (SELECT 1 FROM users o WHERE o.email_canonical = r.canonical)
                           THEN r.canonical ELSE 'duplicate:' || u.id || ':' || r.canonical END
FROM (
    SELECT id, lower(normalize(email, NFKC)) AS canonical,
           row_number() OVER (PARTITION BY lower(normalize(email, NFKC)) ORDER BY id) AS n
    FROM users WHERE email_canonical LIKE 'down00025:%'
) AS r
WHERE u.id = r.id;
