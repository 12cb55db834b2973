package service

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=session.go -destination=mocks/session_mock.go -package=mocks

// SessionRepository stores login sessions (refresh-token families) and their refresh tokens.
type SessionRepository interface {
	Create(ctx context.Context, sessionID string, userID int64, refreshHash []byte, expires time.Time) error
	// CreateIn is Create in the caller's unit of work.
	CreateIn(ctx context.Context, tx Tx, sessionID string, userID int64, refreshHash []byte, expires time.Time) error
	// Rotate spends the refresh token with hash and stores the next one in its session, atomically,
	// returning the session's user and id. A token that was already spent revokes its whole
	// session (someone replayed it: theft) and is domain.ErrRefreshInvalid, as is an unknown,
	// expired or revoked one; revoked reports whether this call revoked the session.
	Rotate(ctx context.Context, hash, nextHash []byte, nextExpires, now time.Time) (userID int64, sessionID string, revoked bool, err error)
	// Revoke ends a session; revoking twice is harmless.
	Revoke(ctx context.Context, sessionID string) error
	IsRevoked(ctx context.Context, sessionID string) (bool, error)
	// RevokedSince lists the sessions revoked at or after since (to rebuild the revocation cache).
	RevokedSince(ctx context.Context, since time.Time) ([]string, error)
}

// RevocationCache remembers revoked sessions for as long as their access tokens can live, so
// access tokens stop working at once without a database read per request.
type RevocationCache interface {
	Revoke(ctx context.Context, sessionID string, ttl time.Duration) error
	// IsRevoked reports whether sessionID is marked revoked. complete is false when the cache
	// cannot vouch for "not revoked": it lost its contents (a Redis restart without persistence)
	// or was never filled.
	IsRevoked(ctx context.Context, sessionID string) (revoked, complete bool, err error)
	// Fill marks every one of sessionIDs revoked for ttl, then declares the cache complete.
	Fill(ctx context.Context, sessionIDs []string, ttl time.Duration) error
}

// APIKeyRepository stores API keys as hashes.
type APIKeyRepository interface {
	Create(ctx context.Context, userID int64, name, prefix string, hash []byte) (domain.APIKey, error)
	List(ctx context.Context, userID int64) ([]domain.APIKey, error)
	// Revoke returns domain.ErrNotFound unless userID owns a live key id.
	Revoke(ctx context.Context, userID, id int64) error
	// Authenticate returns the owner of the live key with hash, or domain.ErrUnauthorized.
	Authenticate(ctx context.Context, hash []byte) (int64, error)
}

// TokenManager issues and verifies access tokens, each tied to a login session. Verify returns
// domain.ErrUnauthorized for any token that is not acceptable, whatever the reason.
type TokenManager interface {
	Issue(userID int64, sessionID string) (string, error)
	Verify(token string) (userID int64, sessionID string, err error)
}

// SessionConfig sets token lifetimes.
type SessionConfig struct {
	AccessTTL  time.Duration
	RefreshTTL time.Duration
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
	log     *slog.Logger

	refilling sync.Mutex  // one refill of the revocation cache at a time
	stale     atomic.Bool // a revocation of this process did not reach the cache: refill before trusting it
}

// NewSessionService returns the service.
func NewSessionService(repo SessionRepository, revoked RevocationCache, tokens TokenManager, keys APIKeyRepository, cfg SessionConfig, now func() time.Time, log *slog.Logger) *SessionService {
	return &SessionService{repo: repo, revoked: revoked, tokens: tokens, keys: keys, cfg: cfg, now: now, log: log}
}

// Start opens a session for userID: a new refresh-token family and an access token tied to it.
func (s *SessionService) Start(ctx context.Context, userID int64) (domain.Tokens, error) {
	return s.start(userID, func(sid string, hash []byte, expires time.Time) error {
		return s.repo.Create(ctx, sid, userID, hash, expires)
	})
}

// StartIn is Start in the caller's unit of work: the session exists exactly when tx commits.
func (s *SessionService) StartIn(ctx context.Context, tx Tx, userID int64) (domain.Tokens, error) {
	return s.start(userID, func(sid string, hash []byte, expires time.Time) error {
		return s.repo.CreateIn(ctx, tx, sid, userID, hash, expires)
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

// Logout ends the session the access token belongs to.
func (s *SessionService) Logout(ctx context.Context, accessToken string) error {
	_, sid, err := s.tokens.Verify(accessToken)
	if err != nil || sid == "" {
		return domain.ErrUnauthorized
	}
	if err := s.repo.Revoke(ctx, sid); err != nil {
		return err
	}
	s.remember(ctx, sid)
	return nil
}

// remember records a revoked session in Redis for the lifetime of its access tokens. If Redis is
// down, Authenticate falls back to PostgreSQL, so revocation still holds; and once Redis answers
// again this process refills it from PostgreSQL before trusting its "not revoked".
func (s *SessionService) remember(ctx context.Context, sid string) {
	if err := s.revoked.Revoke(context.WithoutCancel(ctx), sid, s.cfg.AccessTTL); err != nil {
		s.stale.Store(true)
		s.log.WarnContext(ctx, "revocation cache write failed; PostgreSQL has it, and the cache is refilled from there", "err", err)
	}
}

// revocationWindow is how far back a revocation still matters: a token issued just before it
// lives AccessTTL (plus the clock skew the token check allows, and a margin).
func (s *SessionService) revocationWindow() time.Duration { return s.cfg.AccessTTL + time.Minute }

// refill copies the revocations that still matter from PostgreSQL into the cache and declares it
// complete. Concurrent callers do not wait: they ask PostgreSQL about their own session meanwhile.
func (s *SessionService) refill(ctx context.Context) {
	if !s.refilling.TryLock() {
		return
	}
	defer s.refilling.Unlock()
	wasStale := s.stale.Swap(false) // before reading PostgreSQL: a write failing later marks it again
	ids, err := s.repo.RevokedSince(ctx, s.now().Add(-s.revocationWindow()))
	if err == nil {
		err = s.revoked.Fill(context.WithoutCancel(ctx), ids, s.revocationWindow())
	}
	if err != nil {
		if wasStale {
			s.stale.Store(true)
		}
		s.log.WarnContext(ctx, "refilling the revocation cache failed; checking sessions in PostgreSQL meanwhile", "err", err)
		return
	}
	s.log.InfoContext(ctx, "revocation cache refilled from PostgreSQL", "revoked_sessions", len(ids))
}

// Authenticate returns the user an access token or API key speaks for.
func (s *SessionService) Authenticate(ctx context.Context, token string) (int64, error) {
	if domain.IsAPIKey(token) {
		return s.keys.Authenticate(ctx, domain.HashSecret(token))
	}
	uid, sid, err := s.tokens.Verify(token)
	if err != nil {
		return 0, domain.ErrUnauthorized
	}
	if sid == "" {
		return uid, nil
	}
	revoked, complete, err := s.revoked.IsRevoked(ctx, sid)
	askPostgres := err != nil // Redis is down: ask the system of record rather than let a revoked token through
	if err == nil && !revoked && (!complete || s.stale.Load()) {
		// Redis answers but may have lost revocations (restarted empty, or missed a write of
		// ours): rebuild it, and decide this request by PostgreSQL.
		s.refill(ctx)
		askPostgres = true
	}
	if askPostgres {
		if revoked, err = s.repo.IsRevoked(ctx, sid); err != nil {
			return 0, err
		}
	}
	if revoked {
		return 0, domain.ErrUnauthorized
	}
	return uid, nil
}

// MaxAPIKeys bounds how many live keys one user may hold.
const MaxAPIKeys = 20

// CreateAPIKey makes a key for userID and returns it; the key itself is shown only here.
func (s *SessionService) CreateAPIKey(ctx context.Context, userID int64, name string) (domain.APIKey, string, error) {
	v := &domain.ValidationError{}
	switch {
	case name == "":
		v.Add("name", "can't be blank")
	case len(name) > 100:
		v.Add("name", "is too long (maximum is 100 characters)")
	}
	if err := v.OrNil(); err != nil {
		return domain.APIKey{}, "", err
	}
	existing, err := s.keys.List(ctx, userID)
	if err != nil {
		return domain.APIKey{}, "", err
	}
	if len(existing) >= MaxAPIKeys {
		return domain.APIKey{}, "", domain.NewValidationError("apiKey", fmt.Sprintf("you have %d keys already; revoke one first", MaxAPIKeys))
	}
	key := domain.APIKeyPrefix + domain.NewSecret(32)
	k, err := s.keys.Create(ctx, userID, name, key[:len(domain.APIKeyPrefix)+6], domain.HashSecret(key))
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
