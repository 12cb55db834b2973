// Package auth implements the service's credential ports with real cryptography: Argon2id password
// hashing (golang.org/x/crypto) and HS256 JWT access tokens (golang-jwt). It is an adapter folder of
// its own because it is neither storage (repository, cache) nor transport (web): the service layer
// may not import x/crypto or jwt, so these live behind service.PasswordHasher and service.TokenManager.
package auth
