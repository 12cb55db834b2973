package auth

import "github.com/google/wire"

// ProviderSet builds the password hasher and the access-token manager from their settings.
var ProviderSet = wire.NewSet(NewHasher, NewJWTManager)

// HasherConfig is the Argon2id cost and how many hashes may run at once.
type HasherConfig struct {
	Params        Argon2Params
	MaxConcurrent int
}

// NewHasher returns NewArgon2Hasher(c.Params, c.MaxConcurrent).
func NewHasher(c HasherConfig) (*Argon2Hasher, error) {
	return NewArgon2Hasher(c.Params, c.MaxConcurrent)
}
