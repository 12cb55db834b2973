package auth

import (
	"sync"
	"time"
)

// verifiedTokens remembers the tokens this process has verified, so a client that sends the same
// access token with every request pays for its HMAC and JSON decoding once instead of per request
// (on a cached article read that was a sixth of the CPU). Only tokens that passed Verify are kept,
// keyed by their exact text, with the claims Verify would derive again; the time checks are
// repeated on every use, so a remembered token expires exactly when a parsed one would.
// Revocation is not Verify's concern (the session check runs on every request either way).
type verifiedTokens struct {
	mu      sync.Mutex
	entries map[string]verifiedToken
}

type verifiedToken struct {
	userID    int64
	sessionID string
	issuedAt  time.Time
	expires   time.Time
}

// maxVerifiedTokens bounds the memory: about 300 bytes a token. When full, a tenth is dropped.
const maxVerifiedTokens = 20_000

func (v *verifiedTokens) get(token string, now time.Time) (verifiedToken, bool) {
	v.mu.Lock()
	e, ok := v.entries[token]
	v.mu.Unlock()
	if !ok || !e.validAt(now) {
		return verifiedToken{}, false
	}
	return e, true
}

func (v *verifiedTokens) put(token string, e verifiedToken) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.entries == nil {
		v.entries = make(map[string]verifiedToken)
	}
	if len(v.entries) >= maxVerifiedTokens {
		n := maxVerifiedTokens / 10
		for k := range v.entries { // map order: random enough, cheaper than an LRU
			delete(v.entries, k)
			if n--; n <= 0 {
				break
			}
		}
	}
	v.entries[token] = e
}

// validAt repeats Verify's time checks as the jwt library makes them: issued at most clockSkew
// in the future, not expired for clockSkew yet.
func (e verifiedToken) validAt(now time.Time) bool {
	return !now.Before(e.issuedAt.Add(-clockSkew)) && now.Before(e.expires.Add(clockSkew))
}
