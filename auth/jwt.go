package auth

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/inkwell-dev/inkwell/domain"
)

// JWTConfig configures access tokens.
type JWTConfig struct {
	Secret   []byte
	Issuer   string
	Lifetime time.Duration
}

// JWTManager issues and verifies HS256 access tokens. The algorithm is pinned: a token signed any
// other way (including "none") is refused before its signature is even looked at.
type JWTManager struct {
	cfg      JWTConfig
	now      func() time.Time
	verified verifiedTokens

	MemoHits atomic.Int64 // tokens answered from verifiedTokens, without parsing
}

// NewJWTManager returns a manager; now is the clock (time.Now in production).
func NewJWTManager(cfg JWTConfig, now func() time.Time) (*JWTManager, error) {
	if len(cfg.Secret) < 32 {
		return nil, errors.New("JWT secret must be at least 32 bytes")
	}
	if cfg.Lifetime <= 0 {
		return nil, errors.New("JWT lifetime must be positive")
	}
	return &JWTManager{cfg: cfg, now: now}, nil
}

// claims are the registered claims plus the login session (refresh-token family) the token
// belongs to, so revoking the session revokes its access tokens.
type claims struct {
	jwt.RegisteredClaims
	SessionID string `json:"sid,omitempty"`
}

// Issue returns a signed token for userID in sessionID with iat, exp, iss, sub and sid set.
func (m *JWTManager) Issue(userID int64, sessionID string) (string, error) {
	now := m.now()
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    m.cfg.Issuer,
			Subject:   strconv.FormatInt(userID, 10),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(m.cfg.Lifetime)),
		},
		SessionID: sessionID,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(m.cfg.Secret)
}

// clockSkew is how far apart the clocks of the instances that issue and verify tokens may be: a
// token another instance issued "in the future" by its clock, or that expired a moment ago by
// this one's, is still accepted within it.
const clockSkew = 5 * time.Second

// Verify checks signature, algorithm, issuer and times (allowing clockSkew), and returns the
// subject's user id and the token's session.
func (m *JWTManager) Verify(token string) (int64, string, error) {
	now := m.now()
	if e, ok := m.verified.get(token, now); ok {
		m.MemoHits.Add(1)
		return e.userID, e.sessionID, nil
	}
	var claims claims
	parsed, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return m.cfg.Secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(m.cfg.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(clockSkew),
		jwt.WithTimeFunc(m.now),
	)
	if err != nil || !parsed.Valid {
		return 0, "", fmt.Errorf("%w: %v", domain.ErrUnauthorized, err)
	}
	id, err := strconv.ParseInt(claims.Subject, 10, 64)
	if err != nil || id <= 0 {
		return 0, "", fmt.Errorf("%w: bad subject", domain.ErrUnauthorized)
	}
	// Remembered only when validAt's checks are all there is to repeat (no nbf: Issue sets none).
	if claims.IssuedAt != nil && claims.ExpiresAt != nil && claims.NotBefore == nil {
		m.verified.put(token, verifiedToken{userID: id, sessionID: claims.SessionID, issuedAt: claims.IssuedAt.Time, expires: claims.ExpiresAt.Time})
	}
	return id, claims.SessionID, nil
}
