package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=session.go -destination=mocks/session_mock.go -package=mocks

// SessionRepository stores login sessions (refresh-token families) and their refresh tokens.
type SessionRepository interface {
	// Create opens a session for the client named by userAgent with its first refresh token, and
	// ends (revokes) the user's sessions beyond the keep most recently used, the new one
	// counted, returning the ids it ended.
	Create(ctx context.Context, sessionID string, userID int64, userAgent string, refreshHash []byte, expires time.Time, keep int) (ended []string, err error)
	// CreateIn is Create in the caller's unit of work.
	CreateIn(ctx context.Context, tx Tx, sessionID string, userID int64, userAgent string, refreshHash []byte, expires time.Time, keep int) (ended []string, err error)
	// Rotate spends the refresh token with hash and stores the next one in its session, atomically,
	// returning the session's user and id, and notes the session's last use. A token that was already spent revokes its whole
	// session (someone replayed it: theft) and is domain.ErrRefreshInvalid, as is an unknown,
	// expired or revoked one; revoked reports whether this call revoked the session.
	Rotate(ctx context.Context, hash, nextHash []byte, nextExpires, now time.Time) (userID int64, sessionID string, revoked bool, err error)
	// Revoke ends a session; revoking twice is harmless.
	Revoke(ctx context.Context, sessionID string) error
	// RevokeOwned ends one of userID's live sessions, or is domain.ErrNotFound.
	RevokeOwned(ctx context.Context, userID int64, sessionID string) error
	// RevokeAll ends every live session of userID in a unit of work of its own, and returns the
	// ids it ended.
	RevokeAll(ctx context.Context, userID int64) ([]string, error)
	// RevokeAllIn ends every live session of userID but keep ("" keeps none) in the caller's
	// unit of work, and returns the ids it ended.
	RevokeAllIn(ctx context.Context, tx Tx, userID int64, keep string) ([]string, error)
	// ListLive lists userID's sessions that can still be refreshed, most recently used first.
	ListLive(ctx context.Context, userID int64) ([]domain.SessionInfo, error)
	IsRevoked(ctx context.Context, sessionID string) (bool, error)
	// RevokedWithin lists the sessions revoked in the last d, by the database's clock.
	RevokedWithin(ctx context.Context, d time.Duration) ([]string, error)
}

// RevocationCache remembers revoked sessions for as long as their access tokens can live, so
// access tokens stop working at once without a database read per request. Its "not revoked" is
// vouched for by a lease that the instances keep renewing from PostgreSQL (see
// SessionService.RenewRevocations).
type RevocationCache interface {
	Revoke(ctx context.Context, sessionID string, ttl time.Duration) error
	// IsRevoked reports whether sessionID is marked revoked. complete is false when the lease is
	// not held, so the cache cannot vouch for "not revoked": it lost its contents, or no instance
	// renewed the lease lately.
	IsRevoked(ctx context.Context, sessionID string) (revoked, complete bool, err error)
	// BeginRenewal reports whether the lease is held, and the cache's clock now: a renewed lease
	// runs from this instant, taken before the renewal reads PostgreSQL.
	BeginRenewal(ctx context.Context) (held bool, start time.Time, err error)
	// Grant marks every one of sessionIDs revoked for ttl and holds the lease until expires (the
	// cache's clock), atomically. recentOnly: sessionIDs are the latest revocations only, so the
	// lease may be extended, not started again. granted is false when expires has passed, or
	// when recentOnly and the lease is gone.
	Grant(ctx context.Context, sessionIDs []string, ttl time.Duration, expires time.Time, recentOnly bool) (granted bool, err error)
}

// APIKeyRepository stores API keys as hashes.
type APIKeyRepository interface {
	// Create stores a key unless userID holds max live keys already (domain.ErrAPIKeyLimit); the
	// count and the insert are one step for concurrent creates.
	Create(ctx context.Context, userID int64, name, prefix string, hash []byte, scopes []domain.Scope, max int) (domain.APIKey, error)
	List(ctx context.Context, userID int64) ([]domain.APIKey, error)
	// Revoke returns domain.ErrNotFound unless userID owns a live key id.
	Revoke(ctx context.Context, userID, id int64) error
	// RevokeAllIn revokes every live key of userID in the caller's unit of work.
	RevokeAllIn(ctx context.Context, tx Tx, userID int64) error
	// Authenticate returns the live key with hash as a credential (owner, id, scopes), or
	// domain.ErrUnauthorized.
	Authenticate(ctx context.Context, hash []byte) (domain.Credential, error)
}

// TokenManager issues and verifies access tokens, each tied to a login session. Verify returns
// domain.ErrUnauthorized for any token that is not acceptable, whatever the reason.
type TokenManager interface {
	Issue(userID int64, sessionID string) (string, error)
	Verify(token string) (userID int64, sessionID string, err error)
}

// SessionConfig sets token lifetimes and the revocation lease.
type SessionConfig struct {
	AccessTTL  time.Duration
	RefreshTTL time.Duration
	// PerUser is how many live sessions one user may hold (default DefaultSessionsPerUser): a
	// start past it ends the least recently used, so the list of them stays one bounded page
	// however often a script logs in.
	PerUser int
	// RevocationLease is how long Redis is trusted to hold every revocation, counted from the
	// moment a renewal began reading them from PostgreSQL (default 3 s). A revocation whose
	// Redis mark fails is answered once every lease that began before its commit has ended, so
	// this is also how long such a logout waits.
	RevocationLease time.Duration
	// RecentRevocations is how far back a renewal reads while the lease is held (default 30 s):
	// it covers the time from a revocation's revoked_at to its commit, plus a lease.
	RecentRevocations time.Duration
}

// DefaultSessionsPerUser is SessionConfig.PerUser when it is not set.
const DefaultSessionsPerUser = 100

func (c SessionConfig) withDefaults() SessionConfig {
	if c.PerUser <= 0 {
		c.PerUser = DefaultSessionsPerUser
	}
	if c.RevocationLease <= 0 {
		c.RevocationLease = 3 * time.Second
	}
	if c.RecentRevocations <= 0 {
		c.RecentRevocations = 30 * time.Second
	}
	return c
}

// SessionService starts, rotates and ends login sessions, and authenticates requests by access
// token or API key.
type SessionService struct {
	repo    SessionRepository
	revoked RevocationCache
	tokens  TokenManager
	keys    APIKeyRepository
	cfg     SessionConfig
	now     func() time.Time
	after   func(time.Duration) <-chan time.Time
	log     *slog.Logger

	renewNow chan struct{} // a request found the lease gone: renew it without waiting for the tick

	Stats SessionStats
}

// SessionStats counts how revocations were checked and recorded. Values only grow.
type SessionStats struct {
	PostgresChecks      atomic.Int64 // access tokens checked in PostgreSQL: Redis failed or held no lease
	RevocationsDelayed  atomic.Int64 // revocations whose first Redis mark failed, answered after retries or the lease
	RevocationsUnmarked atomic.Int64 // of those, the ones that never reached Redis: answered after the lease ended
}

// NewSessionService returns the service. now and after are the clock (time.Now, time.After).
func NewSessionService(repo SessionRepository, revoked RevocationCache, tokens TokenManager, keys APIKeyRepository, cfg SessionConfig,
	now func() time.Time, after func(time.Duration) <-chan time.Time, log *slog.Logger) *SessionService {
	return &SessionService{repo: repo, revoked: revoked, tokens: tokens, keys: keys, cfg: cfg.withDefaults(), now: now, after: after, log: log,
		renewNow: make(chan struct{}, 1)}
}

// Start opens a session for userID: a new refresh-token family and an access token tied to it.
// The client is named by the User-Agent that WithUserAgent put in ctx. A user holding
// SessionConfig.PerUser sessions already loses the least recently used one, on every instance
// before this returns, as with a logout.
func (s *SessionService) Start(ctx context.Context, userID int64) (domain.Tokens, error) {
	return s.start(userID, func(sid string, hash []byte, expires time.Time) error {
		ended, err := s.repo.Create(ctx, sid, userID, userAgentOf(ctx), hash, expires, s.cfg.PerUser)
		if err == nil {
			s.rememberAll(ctx, ended)
		}
		return err
	})
}

// StartIn is Start in the caller's unit of work: the session exists exactly when tx commits, and
// a session it ends is marked revoked once tx has committed.
func (s *SessionService) StartIn(ctx context.Context, tx Tx, userID int64) (domain.Tokens, error) {
	return s.start(userID, func(sid string, hash []byte, expires time.Time) error {
		ended, err := s.repo.CreateIn(ctx, tx, sid, userID, userAgentOf(ctx), hash, expires, s.cfg.PerUser)
		if err == nil && len(ended) > 0 {
			tx.AfterCommit(func(ctx context.Context) { s.rememberAll(ctx, ended) })
		}
		return err
	})
}

func (s *SessionService) start(userID int64, store func(sid string, refreshHash []byte, expires time.Time) error) (domain.Tokens, error) {
	sid := domain.NewSessionID()
	refresh := domain.NewSecret(32)
	if err := store(sid, domain.HashSecret(refresh), s.now().Add(s.cfg.RefreshTTL)); err != nil {
		return domain.Tokens{}, err
	}
	access, err := s.tokens.Issue(userID, sid)
	if err != nil {
		return domain.Tokens{}, fmt.Errorf("issue access token: %w", err)
	}
	return domain.Tokens{Access: access, Refresh: refresh}, nil
}

// Refresh rotates a refresh token: the presented one is spent and a new pair is returned. A spent
// token presented again revokes the session, so a thief and the victim are both signed out.
func (s *SessionService) Refresh(ctx context.Context, refresh string) (int64, domain.Tokens, error) {
	if refresh == "" {
		return 0, domain.Tokens{}, domain.NewValidationError("refreshToken", "can't be blank")
	}
	next := domain.NewSecret(32)
	now := s.now()
	uid, sid, revoked, err := s.repo.Rotate(ctx, domain.HashSecret(refresh), domain.HashSecret(next), now.Add(s.cfg.RefreshTTL), now)
	if revoked {
		s.log.WarnContext(ctx, "spent refresh token reused: session revoked", "session", sid, "user_id", uid)
		s.remember(ctx, sid)
	}
	if err != nil {
		return 0, domain.Tokens{}, err
	}
	access, err := s.tokens.Issue(uid, sid)
	if err != nil {
		return 0, domain.Tokens{}, fmt.Errorf("issue access token: %w", err)
	}
	return uid, domain.Tokens{Access: access, Refresh: next}, nil
}

// Logout ends the session the access token belongs to; with all, every session of its user.
func (s *SessionService) Logout(ctx context.Context, accessToken string, all bool) error {
	uid, sid, err := s.tokens.Verify(accessToken)
	if err != nil || sid == "" {
		return domain.ErrUnauthorized
	}
	if all {
		return s.LogoutAll(ctx, uid)
	}
	if err := s.repo.Revoke(ctx, sid); err != nil {
		return err
	}
	s.remember(ctx, sid)
	return nil
}

// Authenticate returns who an access token or API key speaks for, and with which rights.
func (s *SessionService) Authenticate(ctx context.Context, token string) (domain.Credential, error) {
	if domain.IsAPIKey(token) {
		return s.keys.Authenticate(ctx, domain.HashSecret(token))
	}
	uid, sid, err := s.tokens.Verify(token)
	if err != nil {
		return domain.Credential{}, domain.ErrUnauthorized
	}
	cred := domain.Credential{UserID: uid, SessionID: sid}
	if sid == "" {
		return cred, nil
	}
	revoked, complete, err := s.revoked.IsRevoked(ctx, sid)
	if err != nil || (!revoked && !complete) {
		// Redis cannot say, or cannot vouch for "not revoked" (no lease: it restarted empty, or no
		// instance renewed the lease lately, or it missed a revocation and the lease was left to
		// lapse): ask the system of record, and have the lease renewed if Redis answers at all.
		if err == nil {
			s.requestRenewal()
		}
		s.Stats.PostgresChecks.Add(1)
		if revoked, err = s.repo.IsRevoked(ctx, sid); err != nil {
			return domain.Credential{}, err
		}
	}
	if revoked {
		return domain.Credential{}, domain.ErrUnauthorized
	}
	return cred, nil
}

// MaxAPIKeys bounds how many live keys one user may hold.
const MaxAPIKeys = 20

// CreateAPIKey makes a key for userID and returns it; the key itself is shown only here.
func (s *SessionService) CreateAPIKey(ctx context.Context, userID int64, name string, scopes []string) (domain.APIKey, string, error) {
	v := &domain.ValidationError{}
	parsed, err := domain.ParseScopes(scopes)
	if err != nil {
		return domain.APIKey{}, "", err
	}
	switch {
	case name == "":
		v.Add("name", "can't be blank")
	case len(name) > 100:
		v.Add("name", "is too long (maximum is 100 characters)")
	}
	if err := v.OrNil(); err != nil {
		return domain.APIKey{}, "", err
	}
	key := domain.APIKeyPrefix + domain.NewSecret(32)
	k, err := s.keys.Create(ctx, userID, name, key[:len(domain.APIKeyPrefix)+6], domain.HashSecret(key), parsed, MaxAPIKeys)
	if errors.Is(err, domain.ErrAPIKeyLimit) {
		return domain.APIKey{}, "", domain.NewValidationError("apiKey", fmt.Sprintf("you have %d keys already; revoke one first", MaxAPIKeys))
	}
	if err != nil {
		return domain.APIKey{}, "", err
	}
	return k, key, nil
}

// ListAPIKeys lists userID's live keys (never the keys themselves).
func (s *SessionService) ListAPIKeys(ctx context.Context, userID int64) ([]domain.APIKey, error) {
	return s.keys.List(ctx, userID)
}

// RevokeAPIKey revokes one of userID's keys.
func (s *SessionService) RevokeAPIKey(ctx context.Context, userID, id int64) error {
	return s.keys.Revoke(ctx, userID, id)
}
