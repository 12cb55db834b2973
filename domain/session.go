package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
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
	Scopes     []Scope
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
	Reset     time.Duration // until the whole budget is back
	// RetryAfter is, for a refused request, how long until one would be allowed.
	RetryAfter time.Duration
}

// Scope is what an API key may do. No scope includes account management (credentials, keys,
// sessions): only a login session may do that.
type Scope string

const (
	// ScopeRead allows only reading requests (GET).
	ScopeRead Scope = "read"
	// ScopeWrite allows every request except account management; it is the default.
	ScopeWrite Scope = "write"
)

// ParseScopes checks a key's requested scopes: none given (nil: the field was absent or null)
// means the default (write); a list given empty is refused, since a client that sends [] asked
// for no power and must not get the widest; duplicates are dropped.
func ParseScopes(in []string) ([]Scope, error) {
	if in == nil {
		return []Scope{ScopeWrite}, nil
	}
	if len(in) == 0 {
		return nil, NewValidationError("scopes", `must name at least one scope ("read" or "write")`)
	}
	var out []Scope
	seen := map[Scope]bool{}
	for _, s := range in {
		sc := Scope(s)
		if sc != ScopeRead && sc != ScopeWrite {
			return nil, NewValidationError("scopes", `may hold only "read" and "write"`)
		}
		if !seen[sc] {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	return out, nil
}

// Credential is who a request speaks for and with what: a login session (SessionID set) or an
// API key (APIKeyID set, with its scopes).
type Credential struct {
	UserID    int64
	SessionID string
	APIKeyID  int64
	Scopes    []Scope
}

// IsAPIKey reports whether the request was made with an API key.
func (c Credential) IsAPIKey() bool { return c.APIKeyID != 0 }

// CanWrite reports whether the credential may make changing requests: every session may, an API
// key only with the write scope.
func (c Credential) CanWrite() bool {
	if !c.IsAPIKey() {
		return true
	}
	for _, s := range c.Scopes {
		if s == ScopeWrite {
			return true
		}
	}
	return false
}

// SessionInfo describes one live login session to its owner.
type SessionInfo struct {
	ID         string
	UserAgent  string
	CreatedAt  time.Time
	LastUsedAt *time.Time // last refresh; nil until the first
	Current    bool       // the session of the request that listed it
}

// MaxUserAgentLen bounds the user agent recorded with a session.
const MaxUserAgentLen = 256

// ErrAPIKeyLimit means the user holds the most live API keys allowed.
var ErrAPIKeyLimit = errors.New("too many api keys")
