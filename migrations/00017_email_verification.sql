-- +goose Up
-- An email is verified once its owner proved they read it (a verification code, a password-reset
-- code, or a code login). Rows that exist before this migration are left unverified: nothing
-- proves that whoever registered them owns the address, and an account an attacker registered
-- in someone else's name is exactly what must not survive the real owner's first code login.
-- The cost for an honest owner is one resend of the verification code, or a code login that
-- replaces a password they can set again.
ALTER TABLE users ADD COLUMN email_verified_at TIMESTAMPTZ;

-- One-time codes mailed to an account: email verification and password reset. Only the code's
-- SHA-256 is stored. One row per account and purpose: a new code replaces the previous one, but
-- only once the resend interval since sent_at has passed, and a spent code keeps its row (and so
-- its resend interval) until it is replaced. email is the address the code was sent to: a code
-- proves nothing about an address the account has since changed to.
CREATE TABLE account_codes (
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    TEXT        NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
    email      TEXT        NOT NULL,
    code_hash  BYTEA       NOT NULL,
    sent_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL,
    attempts   INTEGER     NOT NULL DEFAULT 0,
    spent_at   TIMESTAMPTZ,
    PRIMARY KEY (user_id, purpose)
);

-- +goose Down
DROP TABLE account_codes;
ALTER TABLE users DROP COLUMN email_verified_at;
