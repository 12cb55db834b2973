package ioc

import (
	"time"

	"github.com/inkwell-dev/inkwell/auth"
)

// NewPasswordHasher returns the Argon2id hasher with the configured parameters.
func NewPasswordHasher(cfg *Config) (*auth.Argon2Hasher, error) {
	p := auth.OWASPMinimum
	p.MemoryKiB = uint32(cfg.Argon2MemoryKiB)
	p.Iterations = uint32(cfg.Argon2Iterations)
	p.Parallelism = uint8(cfg.Argon2Parallelism)
	return auth.NewArgon2Hasher(p, cfg.Argon2MaxConcurrent)
}

// NewJWTManager returns the access-token manager on the wall clock.
func NewJWTManager(cfg *Config) (*auth.JWTManager, error) {
	return auth.NewJWTManager(auth.JWTConfig{Secret: []byte(cfg.JWTSecret), Issuer: cfg.JWTIssuer, Lifetime: cfg.JWTLifetime}, time.Now)
}
