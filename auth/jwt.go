package auth

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"inkwell/domain"
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
	cfg JWTConfig
	now func() time.Time
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

// Issue returns a signed token for userID with iat, exp, iss and sub set.
func (m *JWTManager) Issue(userID int64) (string, error) {
	now := m.now()
	claims := jwt.RegisteredClaims{
		Issuer:    m.cfg.Issuer,
		Subject:   strconv.FormatInt(userID, 10),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(m.cfg.Lifetime)),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(m.cfg.Secret)
}

// Verify checks signature, algorithm, issuer and times, and returns the subject's user id.
func (m *JWTManager) Verify(token string) (int64, error) {
	var claims jwt.RegisteredClaims
	parsed, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return m.cfg.Secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(m.cfg.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(m.now),
	)
	if err != nil || !parsed.Valid {
		return 0, fmt.Errorf("%w: %v", domain.ErrUnauthorized, err)
	}
	id, err := strconv.ParseInt(claims.Subject, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%w: bad subject", domain.ErrUnauthorized)
	}
	return id, nil
}
