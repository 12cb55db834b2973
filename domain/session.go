package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
)

// Tokens are what a login hands out: a short-lived access token and a refresh token that rotates.
type Tokens struct {
	Access  string
	Refresh string
}

// StoredResponse is a response kept for an Idempotency-Key, replayed byte for byte. It never
// holds a secret: an answer that hands out a session (a registration) is stored without its
// tokens and names its account in SessionFor, and each answer sent gets a session of its own.
type StoredResponse struct {
	Status     int
	Body       []byte
	SessionFor int64 // the account a replay signs in; 0 for none
}

// APIKey is a long-lived credential for scripts; only its hash is stored.
type APIKey struct {
	ID         int64
	UserID     int64
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// APIKeyPrefix starts every API key, so keys are recognizable (and scannable in leaked code).
const APIKeyPrefix = "iw_"

// NewSecret returns n random bytes as unpadded base64url.
func NewSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewSessionID returns a random session (refresh-token family) id.
func NewSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// HashSecret is the SHA-256 stored in place of a refresh token or API key. These secrets are
// 256-bit random values, so a fast hash is enough: there is nothing to brute-force.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// IsAPIKey reports whether a bearer credential looks like an API key rather than a JWT.
func IsAPIKey(token string) bool { return strings.HasPrefix(token, APIKeyPrefix) }

// RateDecision is the outcome of counting one request against a rate limit.
type RateDecision struct {
	Allowed   bool
	Limit     int
	Remaining int
	Reset     time.Duration // until the window ends
}
