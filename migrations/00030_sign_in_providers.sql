-- Issue #30: sign in with an account people already have (OpenID Connect issuers and GitHub).
-- No secret is stored in plain text: states, the browser-binding cookie and the one-time exchange
-- codes are kept as sha256 hashes; the PKCE verifier and the nonce are derived from the state and
-- the cookie secret (service/oidc.go), never stored.

-- +goose Up
-- Who an account is at a provider: (provider, subject) names one person for good; the email is
-- the one the provider asserted when the identity was linked (shown in GET /api/user/identities).
CREATE TABLE user_identities (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider     TEXT        NOT NULL,
    subject      TEXT        NOT NULL,
    email        TEXT        NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT user_identities_provider_subject_key UNIQUE (provider, subject)
);
-- An account's identities (the list, the unlink rule).
CREATE INDEX user_identities_user_idx ON user_identities (user_id, id);

-- Accounts a provider made, with the hash of the random password they were given: while the
-- account's password hash is still this one, its owner never set a password, so the last identity
-- may not be unlinked.
CREATE TABLE provider_accounts (
    user_id          BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    placeholder_hash TEXT   NOT NULL
);

-- A sign-in under way: created at start, consumed (deleted) by its callback, at most 10 minutes.
CREATE TABLE sign_in_states (
    state_hash   BYTEA       PRIMARY KEY,
    cookie_hash  BYTEA       NOT NULL,
    provider     TEXT        NOT NULL,
    redirect     TEXT        NOT NULL,
    -- Set when a signed-in user links another provider (the identity joins this account).
    link_user_id BIGINT      REFERENCES users (id) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at   TIMESTAMPTZ NOT NULL
);
-- Retention prunes the expired ones by this index.
CREATE INDEX sign_in_states_expires_idx ON sign_in_states (expires_at);
-- Deleting an account cascades here by index.
CREATE INDEX sign_in_states_link_user_idx ON sign_in_states (link_user_id) WHERE link_user_id IS NOT NULL;

-- The one-time code the front end exchanges for a session: at most 60 seconds, single use.
CREATE TABLE sign_in_codes (
    code_hash  BYTEA       PRIMARY KEY,
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sign_in_codes_expires_idx ON sign_in_codes (expires_at);
CREATE INDEX sign_in_codes_user_idx ON sign_in_codes (user_id);

-- +goose Down
DROP TABLE sign_in_codes;
DROP TABLE sign_in_states;
DROP TABLE provider_accounts;
DROP TABLE user_identities;
