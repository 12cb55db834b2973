-- name: ProviderAccountInsert :exec
-- An account a provider made, with the hash of the random password it was given.
INSERT INTO provider_accounts (user_id, placeholder_hash) VALUES (@user_id::bigint, @placeholder_hash::text);

-- name: ProviderAccountHasPassword :one
-- Whether the account has a password its owner set: any account not made by a provider, or one
-- whose password hash is no longer its placeholder.
SELECT NOT EXISTS (
    SELECT 1 FROM provider_accounts p JOIN users u ON u.id = p.user_id
    WHERE p.user_id = @user_id::bigint AND u.password_hash = p.placeholder_hash
)::bool AS has_password;
