package auth_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/domain"
)

const testIssuer = "inkwell-test"

var (
	testSecret = []byte("0123456789abcdef0123456789abcdef") // 32 bytes, the minimum
	// t0 is a whole second: JWT NumericDates have one-second precision.
	t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
)

const testLifetime = time.Hour

// newJWT returns a manager whose clock reads *clock, so a test can move time by assigning to it.
func newJWT(t *testing.T, clock *time.Time) *auth.JWTManager {
	t.Helper()
	m, err := auth.NewJWTManager(auth.JWTConfig{Secret: testSecret, Issuer: testIssuer, Lifetime: testLifetime},
		func() time.Time { return *clock })
	if err != nil {
		t.Fatalf("NewJWTManager: %v", err)
	}
	return m
}

// validClaims are the claims the manager itself would issue at t0 for user 42.
func validClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"iss": testIssuer,
		"sub": "42",
		"iat": t0.Unix(),
		"exp": t0.Add(testLifetime).Unix(),
	}
}

func sign(t *testing.T, method jwt.SigningMethod, claims jwt.Claims, key any) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("sign %s token: %v", method.Alg(), err)
	}
	return s
}

func TestJWTManager_IssueVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	clock := t0
	m := newJWT(t, &clock)

	token, err := m.Issue(42, "session-1")
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	id, sid, err := m.Verify(token)
	if err != nil || id != 42 || sid != "session-1" {
		t.Fatalf("Verify(issued token) = (%d, %q, %v), want (42, session-1, nil)", id, sid, err)
	}

	// The token is what the manager says it is: HS256 with iss, sub, iat and exp.
	var claims jwt.RegisteredClaims
	parsed, _, err := jwt.NewParser().ParseUnverified(token, &claims)
	if err != nil {
		t.Fatalf("ParseUnverified: %v", err)
	}
	if alg := parsed.Method.Alg(); alg != "HS256" {
		t.Errorf("alg = %q, want HS256", alg)
	}
	if claims.Issuer != testIssuer || claims.Subject != "42" {
		t.Errorf("iss, sub = %q, %q; want %q, %q", claims.Issuer, claims.Subject, testIssuer, "42")
	}
	if claims.IssuedAt == nil || !claims.IssuedAt.Equal(t0) {
		t.Errorf("iat = %v, want %v", claims.IssuedAt, t0)
	}
	if claims.ExpiresAt == nil || !claims.ExpiresAt.Equal(t0.Add(testLifetime)) {
		t.Errorf("exp = %v, want %v", claims.ExpiresAt, t0.Add(testLifetime))
	}
}

func TestJWTManager_Lifetime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		advance time.Duration
		wantOK  bool
	}{
		{name: "just issued", advance: 0, wantOK: true},
		// Another instance issued it with its clock 2 s ahead of this one's (clock skew).
		{name: "issued 2s in this clock's future", advance: -2 * time.Second, wantOK: true},
		{name: "one second before expiry", advance: testLifetime - time.Second, wantOK: true},
		{name: "expired 4s ago, within the clock skew", advance: testLifetime + 4*time.Second, wantOK: true},
		{name: "expired by the clock skew", advance: testLifetime + 5*time.Second, wantOK: false},
		{name: "past expiry", advance: testLifetime + time.Minute, wantOK: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := t0
			m := newJWT(t, &clock)
			token, err := m.Issue(42, "session-1")
			if err != nil {
				t.Fatalf("Issue: %v", err)
			}

			clock = t0.Add(tc.advance)
			id, _, err := m.Verify(token)
			switch {
			case tc.wantOK && (err != nil || id != 42):
				t.Errorf("Verify after %v = (%d, %v), want (42, nil)", tc.advance, id, err)
			case !tc.wantOK && (!errors.Is(err, domain.ErrUnauthorized) || id != 0):
				t.Errorf("Verify after %v = (%d, %v), want (0, ErrUnauthorized)", tc.advance, id, err)
			}
		})
	}
}

func TestJWTManager_VerifyRefuses(t *testing.T) {
	t.Parallel()
	with := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := validClaims()
		change(c)
		return c
	}

	tests := []struct {
		name  string
		token func(t *testing.T) string
	}{
		{name: "empty", token: func(*testing.T) string { return "" }},
		{name: "not a JWT", token: func(*testing.T) string { return "not-a-jwt" }},
		{name: "two segments", token: func(*testing.T) string { return "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9" }},
		{name: "alg none", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodNone, validClaims(), jwt.UnsafeAllowNoneSignatureType)
		}},
		{name: "HS512 with the right secret", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS512, validClaims(), testSecret)
		}},
		{name: "HS256 with another secret", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, validClaims(), []byte("another-secret-another-secret-!!"))
		}},
		{name: "wrong issuer", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["iss"] = "someone-else" }), testSecret)
		}},
		{name: "missing issuer", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { delete(c, "iss") }), testSecret)
		}},
		{name: "missing exp", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { delete(c, "exp") }), testSecret)
		}},
		{name: "iat in the future", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) {
				c["iat"] = t0.Add(time.Minute).Unix()
				c["exp"] = t0.Add(time.Minute + testLifetime).Unix()
			}), testSecret)
		}},
		{name: "nbf in the future", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["nbf"] = t0.Add(time.Minute).Unix() }), testSecret)
		}},
		{name: "exp not a number", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), testSecret)
		}},
		{name: "missing subject", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { delete(c, "sub") }), testSecret)
		}},
		{name: "subject not a number", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["sub"] = "jake" }), testSecret)
		}},
		{name: "subject zero", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["sub"] = "0" }), testSecret)
		}},
		{name: "subject negative", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["sub"] = "-42" }), testSecret)
		}},
		{name: "subject overflows int64", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["sub"] = "9223372036854775808" }), testSecret)
		}},
		{name: "subject a JSON number", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, with(func(c jwt.MapClaims) { c["sub"] = 42 }), testSecret)
		}},
		{name: "tampered payload", token: func(t *testing.T) string {
			// A genuine token for user 42 whose payload is swapped for user 1's, signature kept.
			genuine := sign(t, jwt.SigningMethodHS256, validClaims(), testSecret)
			parts := strings.Split(genuine, ".")
			payload, err := base64.RawURLEncoding.DecodeString(parts[1])
			if err != nil {
				t.Fatalf("decode payload: %v", err)
			}
			forged := strings.Replace(string(payload), `"sub":"42"`, `"sub":"1"`, 1)
			if forged == string(payload) {
				t.Fatalf("payload %s has no sub 42 to tamper with", payload)
			}
			parts[1] = base64.RawURLEncoding.EncodeToString([]byte(forged))
			return strings.Join(parts, ".")
		}},
		{name: "signature stripped", token: func(t *testing.T) string {
			genuine := sign(t, jwt.SigningMethodHS256, validClaims(), testSecret)
			return genuine[:strings.LastIndex(genuine, ".")+1]
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := t0
			m := newJWT(t, &clock)
			token := tc.token(t)
			id, _, err := m.Verify(token)
			if !errors.Is(err, domain.ErrUnauthorized) || id != 0 {
				t.Errorf("Verify(%q) = (%d, %v), want (0, ErrUnauthorized)", token, id, err)
			}
		})
	}

	t.Run("control: the same construction with valid claims is accepted", func(t *testing.T) {
		t.Parallel()
		clock := t0
		m := newJWT(t, &clock)
		id, _, err := m.Verify(sign(t, jwt.SigningMethodHS256, validClaims(), testSecret))
		if err != nil || id != 42 {
			t.Errorf("Verify(valid foreign-built token) = (%d, %v), want (42, nil)", id, err)
		}
	})
}

func TestNewJWTManager_RefusesBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  auth.JWTConfig
	}{
		{name: "no secret", cfg: auth.JWTConfig{Issuer: testIssuer, Lifetime: time.Hour}},
		{name: "secret shorter than 32 bytes", cfg: auth.JWTConfig{Secret: testSecret[:31], Issuer: testIssuer, Lifetime: time.Hour}},
		{name: "zero lifetime", cfg: auth.JWTConfig{Secret: testSecret, Issuer: testIssuer}},
		{name: "negative lifetime", cfg: auth.JWTConfig{Secret: testSecret, Issuer: testIssuer, Lifetime: -time.Hour}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := auth.NewJWTManager(tc.cfg, time.Now)
			if err == nil || m != nil {
				t.Errorf("NewJWTManager(%+v) = (%v, %v), want (nil, error)", tc.cfg, m, err)
			}
		})
	}
}

// Acceptance: a token verified once is answered from memory, with the same claims, and stops
// being accepted at exactly the instant a parse would refuse it; a tampered or other token is
// parsed (and refused) however often the genuine one was seen.
func TestJWTManager_RemembersVerifiedTokens(t *testing.T) {
	t.Parallel()
	clock := t0
	m := newJWT(t, &clock)
	tok, err := m.Issue(42, "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		uid, sid, err := m.Verify(tok)
		if err != nil || uid != 42 || sid != "sess-1" {
			t.Fatalf("Verify #%d = %d, %q, %v", i+1, uid, sid, err)
		}
	}
	if n := m.MemoHits.Load(); n != 2 {
		t.Fatalf("MemoHits = %d after three verifications, want 2", n)
	}
	tampered := tok[:len(tok)-2] + "xx"
	if _, _, err := m.Verify(tampered); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("tampered token: %v, want ErrUnauthorized", err)
	}
	// The last instant the library accepts, then the first it refuses; the memory agrees.
	fresh := newJWT(t, &clock)
	clock = t0.Add(testLifetime + 5*time.Second - time.Nanosecond)
	_, _, parsedErr := fresh.Verify(tok)
	if _, _, err := m.Verify(tok); (err == nil) != (parsedErr == nil) || err != nil {
		t.Fatalf("just before the end: remembered %v, parsed %v; want both accepted", err, parsedErr)
	}
	clock = t0.Add(testLifetime + 5*time.Second)
	fresh = newJWT(t, &clock)
	_, _, parsedErr = fresh.Verify(tok)
	if _, _, err := m.Verify(tok); err == nil || parsedErr == nil {
		t.Fatalf("at the end: remembered %v, parsed %v; want both refused", err, parsedErr)
	}
	// Before its issue time (minus the skew) too.
	clock = t0.Add(-5*time.Second - time.Nanosecond)
	if _, _, err := m.Verify(tok); err == nil {
		t.Fatal("a remembered token was accepted before it was issued")
	}
}
