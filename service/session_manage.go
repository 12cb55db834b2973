package service

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/inkwell-dev/inkwell/domain"
)

// userAgentKey carries the client's User-Agent from the HTTP layer to the session it opens.
type userAgentKey struct{}

// WithUserAgent returns ctx naming the client that makes the request; a session started with it
// records the name (cut to domain.MaxUserAgentLen), so its owner can tell sessions apart.
func WithUserAgent(ctx context.Context, ua string) context.Context {
	return context.WithValue(ctx, userAgentKey{}, ua)
}

func userAgentOf(ctx context.Context) string {
	ua, _ := ctx.Value(userAgentKey{}).(string)
	ua = strings.ToValidUTF8(strings.TrimSpace(ua), "")
	for len(ua) > domain.MaxUserAgentLen {
		_, size := utf8.DecodeLastRuneInString(ua)
		ua = ua[:len(ua)-size]
	}
	return ua
}

// ListSessions lists the live sessions of the credential's user, the credential's own marked
// current.
func (s *SessionService) ListSessions(ctx context.Context, cred domain.Credential) ([]domain.SessionInfo, error) {
	list, err := s.repo.ListLive(ctx, cred.UserID)
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].Current = list[i].ID == cred.SessionID
	}
	return list, nil
}

// RevokeSession ends one of userID's sessions: its refresh tokens stop working at once and its
// access tokens on every instance before this returns. Another user's session, an unknown one
// and one already ended are domain.ErrNotFound.
func (s *SessionService) RevokeSession(ctx context.Context, userID int64, sessionID string) error {
	if sessionID == "" || len(sessionID) > 64 {
		return domain.ErrNotFound
	}
	if err := s.repo.RevokeOwned(ctx, userID, sessionID); err != nil {
		return err
	}
	s.remember(ctx, sessionID)
	return nil
}

// LogoutAll ends every session of userID, the caller's own included.
// Its refresh tokens stop working at once, its access tokens on every instance before this
// returns. API keys stay (they are revoked one by one, or by a credential change).
func (s *SessionService) LogoutAll(ctx context.Context, userID int64) error {
	ids, err := s.repo.RevokeAll(ctx, userID)
	if err != nil {
		return err
	}
	s.rememberAll(ctx, ids)
	return nil
}

// RevokeAllIn ends every session of userID except keep ("" ends all), and with keys every API key
// too, in the caller's unit of work. Once it commits (before the unit of work returns), each
// ended session is marked revoked on every instance.
func (s *SessionService) RevokeAllIn(ctx context.Context, tx Tx, userID int64, keep string, keys bool) error {
	ids, err := s.repo.RevokeAllIn(ctx, tx, userID, keep)
	if err != nil {
		return err
	}
	if keys {
		if err := s.keys.RevokeAllIn(ctx, tx, userID); err != nil {
			return err
		}
	}
	tx.AfterCommit(func(ctx context.Context) { s.rememberAll(ctx, ids) })
	return nil
}
