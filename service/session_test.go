package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type sessionDeps struct {
	repo    *mocks.MockSessionRepository
	revoked *mocks.MockRevocationCache
	tokens  *mocks.MockTokenManager
	keys    *mocks.MockAPIKeyRepository
}

// sessionNow is the injected clock of every SessionService under test.
var sessionNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

var sessionCfg = service.SessionConfig{AccessTTL: 24 * time.Hour, RefreshTTL: 30 * 24 * time.Hour,
	RevocationLease: 3 * time.Second, RecentRevocations: 30 * time.Second}

// revocationWindow is how far back revocations matter with sessionCfg: an access-token lifetime
// and a minute.
const revocationWindow = 24*time.Hour + time.Minute

// markTTL is how long a revocation's Redis mark lives: the revocation window, so a logged-out
// token cannot come back near its expiry, when the token check still allows clock skew (5 s).
const markTTL = revocationWindow

func newSessionService(t *testing.T) (*service.SessionService, sessionDeps) {
	t.Helper()
	return newSessionServiceOn(t, newTestClock(sessionNow))
}

// newSessionServiceOn is newSessionService on the clock clk.
func newSessionServiceOn(t *testing.T, clk *testClock) (*service.SessionService, sessionDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := sessionDeps{
		repo:    mocks.NewMockSessionRepository(ctrl),
		revoked: mocks.NewMockRevocationCache(ctrl),
		tokens:  mocks.NewMockTokenManager(ctrl),
		keys:    mocks.NewMockAPIKeyRepository(ctrl),
	}
	return service.NewSessionService(d.repo, d.revoked, d.tokens, d.keys, sessionCfg, clk.Now, clk.After, discardLogger), d
}

// hashOf matches a []byte argument equal to domain.HashSecret(secret).
func hashOf(secret string) gomock.Matcher { return gomock.Eq(domain.HashSecret(secret)) }

var (
	errDB    = errors.New("pq: connection reset by peer")
	errRedis = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
)

func TestSessionService_Start(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		buildStubs func(d sessionDeps, created *createdSession)
		check      func(t *testing.T, tok domain.Tokens, err error, created *createdSession)
	}{
		{
			name: "opens a family with the hashed refresh token and issues an access token of that session",
			buildStubs: func(d sessionDeps, c *createdSession) {
				gomock.InOrder(
					d.repo.EXPECT().Create(gomock.Any(), gomock.Any(), int64(7), "", gomock.Any(), sessionNow.Add(sessionCfg.RefreshTTL), service.DefaultSessionsPerUser).
						DoAndReturn(func(_ context.Context, sid string, _ int64, _ string, hash []byte, _ time.Time, _ int) ([]string, error) {
							c.sid, c.hash = sid, hash
							return nil, nil
						}),
					d.tokens.EXPECT().Issue(int64(7), gomock.Any()).DoAndReturn(func(_ int64, sid string) (string, error) {
						c.issuedFor = sid
						return "ACCESS", nil
					}),
				)
			},
			check: func(t *testing.T, tok domain.Tokens, err error, c *createdSession) {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				if tok.Access != "ACCESS" || len(tok.Refresh) < 43 {
					t.Fatalf("tokens = %+v, want the issued access token and a 256-bit refresh token", tok)
				}
				if c.sid == "" || c.issuedFor != c.sid {
					t.Fatalf("access token issued for session %q, stored session %q", c.issuedFor, c.sid)
				}
				if !bytes.Equal(c.hash, domain.HashSecret(tok.Refresh)) {
					t.Fatal("the stored hash is not SHA-256 of the refresh token handed out")
				}
			},
		},
		{
			name: "a start past the cap marks the sessions it ended revoked before it answers",
			buildStubs: func(d sessionDeps, _ *createdSession) {
				d.repo.EXPECT().Create(gomock.Any(), gomock.Any(), int64(7), gomock.Any(), gomock.Any(), gomock.Any(), service.DefaultSessionsPerUser).
					Return([]string{"sid-old"}, nil)
				d.revoked.EXPECT().Revoke(gomock.Any(), "sid-old", markTTL).Return(nil)
				d.tokens.EXPECT().Issue(int64(7), gomock.Any()).Return("ACCESS", nil)
			},
			check: func(t *testing.T, tok domain.Tokens, err error, _ *createdSession) {
				if err != nil || tok.Access != "ACCESS" {
					t.Fatalf("Start = %+v, %v", tok, err)
				}
			},
		},
		{
			name: "storage failing issues nothing",
			buildStubs: func(d sessionDeps, _ *createdSession) {
				d.repo.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, errDB)
				d.tokens.EXPECT().Issue(gomock.Any(), gomock.Any()).Times(0)
				d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, tok domain.Tokens, err error, _ *createdSession) {
				requireErrorIs(t, err, errDB)
				if tok != (domain.Tokens{}) {
					t.Fatalf("tokens handed out on failure: %+v", tok)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			c := &createdSession{}
			tc.buildStubs(d, c)
			tok, err := s.Start(t.Context(), 7)
			tc.check(t, tok, err, c)
		})
	}
}

type createdSession struct {
	sid, issuedFor string
	hash           []byte
}

func TestSessionService_Refresh(t *testing.T) {
	t.Parallel()
	rotate := func(d sessionDeps) *gomock.Call {
		return d.repo.EXPECT().Rotate(gomock.Any(), hashOf("R0"), gomock.Any(), sessionNow.Add(sessionCfg.RefreshTTL), sessionNow)
	}
	tests := []struct {
		name       string
		refresh    string
		buildStubs func(d sessionDeps, next *[]byte)
		check      func(t *testing.T, uid int64, tok domain.Tokens, err error, next []byte)
	}{
		{
			name:    "blank token: validation error, storage untouched",
			refresh: "",
			buildStubs: func(d sessionDeps, _ *[]byte) {
				d.repo.EXPECT().Rotate(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.tokens.EXPECT().Issue(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ int64, _ domain.Tokens, err error, _ []byte) {
				requireValidation(t, err, map[string][]string{"refreshToken": {"can't be blank"}})
			},
		},
		{
			name:    "rotates: the next refresh token is the one stored, the access token is of the same session",
			refresh: "R0",
			buildStubs: func(d sessionDeps, next *[]byte) {
				rotate(d).DoAndReturn(func(_ context.Context, _, nextHash []byte, _, _ time.Time) (int64, string, bool, error) {
					*next = nextHash
					return 7, "sid-1", false, nil
				})
				d.tokens.EXPECT().Issue(int64(7), "sid-1").Return("ACCESS-2", nil)
				d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, uid int64, tok domain.Tokens, err error, next []byte) {
				if err != nil || uid != 7 || tok.Access != "ACCESS-2" {
					t.Fatalf("Refresh = %d %+v %v", uid, tok, err)
				}
				if tok.Refresh == "R0" || !bytes.Equal(next, domain.HashSecret(tok.Refresh)) {
					t.Fatal("the refresh token handed out is not the one stored")
				}
			},
		},
		{
			name:    "reuse of a spent token: the revoked session goes to the revocation cache for the access-token lifetime",
			refresh: "R0",
			buildStubs: func(d sessionDeps, _ *[]byte) {
				rotate(d).Return(int64(7), "sid-1", true, domain.ErrRefreshInvalid)
				d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(nil)
				d.tokens.EXPECT().Issue(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, uid int64, tok domain.Tokens, err error, _ []byte) {
				requireErrorIs(t, err, domain.ErrRefreshInvalid)
				if uid != 0 || tok != (domain.Tokens{}) {
					t.Fatalf("reuse handed out %d %+v", uid, tok)
				}
			},
		},
		{
			name:    "reuse with Redis down: still refused (PostgreSQL has the revocation), the mark retried",
			refresh: "R0",
			buildStubs: func(d sessionDeps, _ *[]byte) {
				rotate(d).Return(int64(7), "sid-1", true, domain.ErrRefreshInvalid)
				d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(errRedis).MinTimes(2)
				d.tokens.EXPECT().Issue(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ int64, _ domain.Tokens, err error, _ []byte) {
				requireErrorIs(t, err, domain.ErrRefreshInvalid)
			},
		},
		{
			name:    "unknown, expired or revoked token: refused without touching the cache",
			refresh: "R0",
			buildStubs: func(d sessionDeps, _ *[]byte) {
				rotate(d).Return(int64(0), "", false, domain.ErrRefreshInvalid)
				d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.tokens.EXPECT().Issue(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ int64, _ domain.Tokens, err error, _ []byte) {
				requireErrorIs(t, err, domain.ErrRefreshInvalid)
				requireErrorIs(t, err, domain.ErrUnauthorized)
			},
		},
		{
			name:    "storage failing is not an authentication failure",
			refresh: "R0",
			buildStubs: func(d sessionDeps, _ *[]byte) {
				rotate(d).Return(int64(0), "", false, errDB)
				d.tokens.EXPECT().Issue(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ int64, _ domain.Tokens, err error, _ []byte) {
				requireErrorIs(t, err, errDB)
				if errors.Is(err, domain.ErrUnauthorized) {
					t.Fatal("a database failure became a 401")
				}
			},
		},
		{
			name:    "the token issuer failing",
			refresh: "R0",
			buildStubs: func(d sessionDeps, _ *[]byte) {
				rotate(d).Return(int64(7), "sid-1", false, nil)
				d.tokens.EXPECT().Issue(int64(7), "sid-1").Return("", errors.New("sign: boom"))
			},
			check: func(t *testing.T, _ int64, tok domain.Tokens, err error, _ []byte) {
				if err == nil || tok != (domain.Tokens{}) {
					t.Fatalf("Refresh = %+v %v, want an error and no tokens", tok, err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			var next []byte
			tc.buildStubs(d, &next)
			uid, tok, err := s.Refresh(t.Context(), tc.refresh)
			tc.check(t, uid, tok, err, next)
		})
	}
}

func TestSessionService_Logout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		buildStubs func(d sessionDeps)
		wantErr    error // nil: success
	}{
		{
			name: "revokes the token's session in PostgreSQL, then in the cache",
			buildStubs: func(d sessionDeps) {
				d.tokens.EXPECT().Verify("ACCESS").Return(int64(7), "sid-1", nil)
				gomock.InOrder(
					d.repo.EXPECT().Revoke(gomock.Any(), "sid-1").Return(nil),
					d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(nil),
				)
			},
		},
		{
			name: "Redis down: logout still succeeds, PostgreSQL has it; the mark is retried",
			buildStubs: func(d sessionDeps) {
				d.tokens.EXPECT().Verify("ACCESS").Return(int64(7), "sid-1", nil)
				d.repo.EXPECT().Revoke(gomock.Any(), "sid-1").Return(nil)
				d.revoked.EXPECT().Revoke(gomock.Any(), "sid-1", markTTL).Return(errRedis).MinTimes(2)
			},
		},
		{
			name: "an invalid token: 401, nothing revoked",
			buildStubs: func(d sessionDeps) {
				d.tokens.EXPECT().Verify("ACCESS").Return(int64(0), "", domain.ErrUnauthorized)
				d.repo.EXPECT().Revoke(gomock.Any(), gomock.Any()).Times(0)
				d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name: "a token without a session: 401, nothing revoked",
			buildStubs: func(d sessionDeps) {
				d.tokens.EXPECT().Verify("ACCESS").Return(int64(7), "", nil)
				d.repo.EXPECT().Revoke(gomock.Any(), gomock.Any()).Times(0)
				d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name: "PostgreSQL failing: the error, and no cache-only revocation",
			buildStubs: func(d sessionDeps) {
				d.tokens.EXPECT().Verify("ACCESS").Return(int64(7), "sid-1", nil)
				d.repo.EXPECT().Revoke(gomock.Any(), "sid-1").Return(errDB)
				d.revoked.EXPECT().Revoke(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: errDB,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			tc.buildStubs(d)
			err := s.Logout(t.Context(), "ACCESS", false)
			if tc.wantErr == nil && err != nil {
				t.Fatalf("Logout: %v", err)
			}
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
			}
		})
	}
}

func TestSessionService_Authenticate(t *testing.T) {
	t.Parallel()
	const apiKey = "iw_0123456789abcdefghijklmnopqrstuvwxyzABCDE"
	jwt := func(d sessionDeps) { d.tokens.EXPECT().Verify("JWT").Return(int64(7), "sid-1", nil) }
	tests := []struct {
		name       string
		token      string
		buildStubs func(d sessionDeps)
		wantID     int64
		wantErr    error // nil: wantID
		anyErr     bool  // any error, but not ErrUnauthorized and not a user
		renewal    bool  // the request asks the renewer to renew the lease now
	}{
		{
			name:  "a live session's token",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, true, nil)
				d.repo.EXPECT().IsRevoked(gomock.Any(), gomock.Any()).Times(0)
			},
			wantID: 7,
		},
		{
			name:  "a revoked session's token, known to Redis",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(true, true, nil)
				d.repo.EXPECT().IsRevoked(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name:  "Redis down: PostgreSQL says revoked, the token is refused",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				gomock.InOrder(
					d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, false, errRedis),
					d.repo.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(true, nil),
				)
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name:  "Redis down: PostgreSQL says live, the token works",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, false, errRedis)
				d.repo.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, nil)
			},
			wantID: 7,
		},
		{
			name:  "no lease (Redis restarted empty, or no renewal lately): PostgreSQL decides, revoked",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				gomock.InOrder(
					d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, false, nil),
					d.repo.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(true, nil),
				)
				noRenewalHere(d)
			},
			wantErr: domain.ErrUnauthorized,
			renewal: true,
		},
		{
			name:  "no lease: PostgreSQL decides, live",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, false, nil)
				d.repo.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, nil)
				noRenewalHere(d)
			},
			wantID:  7,
			renewal: true,
		},
		{
			name:  "a revoked mark is trusted even without the lease",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(true, false, nil)
				d.repo.EXPECT().IsRevoked(gomock.Any(), gomock.Any()).Times(0)
				noRenewalHere(d)
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name:  "Redis and PostgreSQL down: an error, never a user",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				jwt(d)
				d.revoked.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, false, errRedis)
				d.repo.EXPECT().IsRevoked(gomock.Any(), "sid-1").Return(false, errDB)
			},
			anyErr: true,
		},
		{
			name:  "a token that does not verify: 401, no lookups",
			token: "JWT",
			buildStubs: func(d sessionDeps) {
				d.tokens.EXPECT().Verify("JWT").Return(int64(0), "", fmt.Errorf("%w: token is expired", domain.ErrUnauthorized))
				d.revoked.EXPECT().IsRevoked(gomock.Any(), gomock.Any()).Times(0)
				d.repo.EXPECT().IsRevoked(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name:  "an API key is looked up by its hash, never verified as a JWT",
			token: apiKey,
			buildStubs: func(d sessionDeps) {
				d.keys.EXPECT().Authenticate(gomock.Any(), hashOf(apiKey)).Return(domain.Credential{UserID: 9, APIKeyID: 1}, nil)
				d.tokens.EXPECT().Verify(gomock.Any()).Times(0)
				d.revoked.EXPECT().IsRevoked(gomock.Any(), gomock.Any()).Times(0)
			},
			wantID: 9,
		},
		{
			name:  "an unknown or revoked API key",
			token: "iw_unknown",
			buildStubs: func(d sessionDeps) {
				d.keys.EXPECT().Authenticate(gomock.Any(), hashOf("iw_unknown")).Return(domain.Credential{}, domain.ErrUnauthorized)
				d.tokens.EXPECT().Verify(gomock.Any()).Times(0)
			},
			wantErr: domain.ErrUnauthorized,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			tc.buildStubs(d)
			cred, err := s.Authenticate(t.Context(), tc.token)
			id := cred.UserID
			select {
			case <-s.RenewalRequests():
				if !tc.renewal {
					t.Error("a lease renewal was requested, though Redis vouched for its answer or could not answer")
				}
			default:
				if tc.renewal {
					t.Error("Redis answered without a lease, and no lease renewal was requested")
				}
			}
			switch {
			case tc.anyErr:
				if err == nil || id != 0 || errors.Is(err, domain.ErrUnauthorized) {
					t.Fatalf("Authenticate = %d, %v; want an infrastructure error", id, err)
				}
			case tc.wantErr != nil:
				requireErrorIs(t, err, tc.wantErr)
				if id != 0 {
					t.Fatalf("Authenticate returned user %d with an error", id)
				}
			default:
				if err != nil || id != tc.wantID {
					t.Fatalf("Authenticate = %d, %v; want %d", id, err, tc.wantID)
				}
			}
		})
	}
}

func TestSessionService_APIKeys(t *testing.T) {
	t.Parallel()
	created := domain.APIKey{ID: 3, UserID: 7, Name: "ci", Prefix: "iw_abcdef", CreatedAt: sessionNow}
	untouched := func(d sessionDeps) {
		d.keys.EXPECT().List(gomock.Any(), gomock.Any()).Times(0)
		d.keys.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	tests := []struct {
		name       string
		keyName    string
		scopes     []string
		buildStubs func(d sessionDeps, stored *storedKey)
		check      func(t *testing.T, k domain.APIKey, key string, err error, stored *storedKey)
	}{
		{
			name:    "creates an iw_ key; only its hash and prefix are stored",
			keyName: "ci",
			buildStubs: func(d sessionDeps, s *storedKey) {
				d.keys.EXPECT().Create(gomock.Any(), int64(7), "ci", gomock.Any(), gomock.Any(), []domain.Scope{domain.ScopeWrite}, service.MaxAPIKeys).DoAndReturn(
					func(_ context.Context, _ int64, _, prefix string, hash []byte, _ []domain.Scope, _ int) (domain.APIKey, error) {
						s.prefix, s.hash = prefix, hash
						return created, nil
					})
			},
			check: func(t *testing.T, k domain.APIKey, key string, err error, s *storedKey) {
				if err != nil || k.ID != created.ID || k.Prefix != created.Prefix {
					t.Fatalf("CreateAPIKey = %+v, %v", k, err)
				}
				if !strings.HasPrefix(key, "iw_") || len(key) < 3+43 || !domain.IsAPIKey(key) {
					t.Fatalf("key %q is not an iw_ key with 256 random bits", key)
				}
				if s.prefix != key[:9] || !bytes.Equal(s.hash, domain.HashSecret(key)) {
					t.Fatalf("stored prefix %q and hash do not belong to key %q", s.prefix, key)
				}
				if bytes.Contains(s.hash, []byte(key)) {
					t.Fatal("the key itself was handed to storage")
				}
			},
		},
		{
			name:       "blank name",
			keyName:    "",
			buildStubs: func(d sessionDeps, _ *storedKey) { untouched(d) },
			check: func(t *testing.T, _ domain.APIKey, key string, err error, _ *storedKey) {
				requireValidation(t, err, map[string][]string{"name": {"can't be blank"}})
				if key != "" {
					t.Fatal("a key was handed out")
				}
			},
		},
		{
			name:       "name too long",
			keyName:    strings.Repeat("n", 101),
			buildStubs: func(d sessionDeps, _ *storedKey) { untouched(d) },
			check: func(t *testing.T, _ domain.APIKey, _ string, err error, _ *storedKey) {
				requireValidation(t, err, map[string][]string{"name": {"is too long (maximum is 100 characters)"}})
			},
		},
		{
			name:    "at most 20 live keys: storage counts and inserts in one step",
			keyName: "one too many",
			buildStubs: func(d sessionDeps, _ *storedKey) {
				d.keys.EXPECT().Create(gomock.Any(), int64(7), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), service.MaxAPIKeys).Return(domain.APIKey{}, domain.ErrAPIKeyLimit)
			},
			check: func(t *testing.T, _ domain.APIKey, _ string, err error, _ *storedKey) {
				requireValidation(t, err, map[string][]string{"apiKey": {"you have 20 keys already; revoke one first"}})
			},
		},
		{
			name:       "unknown scope",
			keyName:    "ci",
			scopes:     []string{"admin"},
			buildStubs: func(d sessionDeps, _ *storedKey) { untouched(d) },
			check: func(t *testing.T, _ domain.APIKey, _ string, err error, _ *storedKey) {
				requireValidation(t, err, map[string][]string{"scopes": {`may hold only "read" and "write"`}})
			},
		},
		{
			name:       "an empty scope list is refused, not made a write key",
			keyName:    "ci",
			scopes:     []string{},
			buildStubs: func(d sessionDeps, _ *storedKey) { untouched(d) },
			check: func(t *testing.T, _ domain.APIKey, key string, err error, _ *storedKey) {
				requireValidation(t, err, map[string][]string{"scopes": {`must name at least one scope ("read" or "write")`}})
				if key != "" {
					t.Fatal("a key was handed out")
				}
			},
		},
		{
			name:    "a read key",
			keyName: "ci",
			scopes:  []string{"read", "read"},
			buildStubs: func(d sessionDeps, _ *storedKey) {
				d.keys.EXPECT().Create(gomock.Any(), int64(7), "ci", gomock.Any(), gomock.Any(), []domain.Scope{domain.ScopeRead}, service.MaxAPIKeys).Return(created, nil)
			},
			check: func(t *testing.T, _ domain.APIKey, _ string, err error, _ *storedKey) {
				if err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:    "storage failing hands out no key",
			keyName: "ci",
			buildStubs: func(d sessionDeps, _ *storedKey) {
				d.keys.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.APIKey{}, errDB)
			},
			check: func(t *testing.T, _ domain.APIKey, key string, err error, _ *storedKey) {
				requireErrorIs(t, err, errDB)
				if key != "" {
					t.Fatal("a key that was never stored was handed out")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := newSessionService(t)
			stored := &storedKey{}
			tc.buildStubs(d, stored)
			k, key, err := s.CreateAPIKey(t.Context(), 7, tc.keyName, tc.scopes)
			tc.check(t, k, key, err, stored)
		})
	}

	t.Run("list and revoke pass through, scoped to the user", func(t *testing.T) {
		t.Parallel()
		s, d := newSessionService(t)
		d.keys.EXPECT().List(gomock.Any(), int64(7)).Return([]domain.APIKey{created}, nil)
		d.keys.EXPECT().Revoke(gomock.Any(), int64(7), int64(3)).Return(domain.ErrNotFound)
		if l, err := s.ListAPIKeys(t.Context(), 7); err != nil || len(l) != 1 || l[0].ID != created.ID {
			t.Fatalf("ListAPIKeys = %+v, %v", l, err)
		}
		requireErrorIs(t, s.RevokeAPIKey(t.Context(), 7, 3), domain.ErrNotFound)
	})
}

type storedKey struct {
	prefix string
	hash   []byte
}

// noRenewalHere: the request path never renews the lease itself (it asks the renewer).
func noRenewalHere(d sessionDeps) {
	d.repo.EXPECT().RevokedWithin(gomock.Any(), gomock.Any()).Times(0)
	d.revoked.EXPECT().BeginRenewal(gomock.Any()).Times(0)
	d.revoked.EXPECT().Grant(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}
