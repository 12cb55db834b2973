package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=session.go -destination=mocks/session_mock.go -package=mocks

// SessionService is what the session and API-key handlers need.
type SessionService interface {
	Refresh(ctx context.Context, refresh string) (int64, domain.Tokens, error)
	Logout(ctx context.Context, accessToken string) error
	CreateAPIKey(ctx context.Context, userID int64, name string) (domain.APIKey, string, error)
	ListAPIKeys(ctx context.Context, userID int64) ([]domain.APIKey, error)
	RevokeAPIKey(ctx context.Context, userID, id int64) error
}

// SessionHandler serves token refresh, logout and API keys.
type SessionHandler struct {
	sessions SessionService
	users    UserService
	log      *slog.Logger
}

// NewSessionHandler returns the handler.
func NewSessionHandler(sessions SessionService, users UserService, log *slog.Logger) *SessionHandler {
	return &SessionHandler{sessions: sessions, users: users, log: log}
}

type refreshRequest struct {
	RefreshToken string `json:"refreshToken"`
}

// Refresh handles POST /api/users/refresh: the presented refresh token is spent and the answer is
// the user with a new access token and refresh token.
func (h *SessionHandler) Refresh(c *gin.Context) {
	var req refreshRequest
	if !bindJSON(c, &req) {
		return
	}
	uid, tokens, err := h.sessions.Refresh(c.Request.Context(), req.RefreshToken)
	if err != nil {
		if errors.Is(err, domain.ErrRefreshInvalid) || isUnauthorized(err) {
			abortWith(c, http.StatusUnauthorized, "refreshToken", "is invalid, expired or already used; log in again")
			return
		}
		writeError(c, h.log, err)
		return
	}
	u, err := h.users.Current(c.Request.Context(), uid)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, sessionResponse(service.Session{User: u, Token: tokens.Access, Refresh: tokens.Refresh}))
}

// Logout handles POST /api/users/logout: the session of the presented access token ends, its
// refresh tokens stop working at once and its access tokens within a second.
func (h *SessionHandler) Logout(c *gin.Context) {
	if err := h.sessions.Logout(c.Request.Context(), requestToken(c)); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

type apiKeyJSON struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Key        string     `json:"key,omitempty"` // only in the creation answer
	CreatedAt  timestamp  `json:"createdAt"`
	LastUsedAt *timestamp `json:"lastUsedAt"`
}

func apiKeyOf(k domain.APIKey, key string) apiKeyJSON {
	out := apiKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Key: key, CreatedAt: timestamp(k.CreatedAt)}
	if k.LastUsedAt != nil {
		t := timestamp(*k.LastUsedAt)
		out.LastUsedAt = &t
	}
	return out
}

type createAPIKeyRequest struct {
	APIKey struct {
		Name string `json:"name"`
	} `json:"apiKey"`
}

// CreateAPIKey handles POST /api/user/api-keys; the key is in this answer and nowhere else, ever.
func (h *SessionHandler) CreateAPIKey(c *gin.Context) {
	var req createAPIKeyRequest
	if !bindJSON(c, &req) {
		return
	}
	k, key, err := h.sessions.CreateAPIKey(c.Request.Context(), viewerID(c), req.APIKey.Name)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusCreated, gin.H{"apiKey": apiKeyOf(k, key)})
}

// ListAPIKeys handles GET /api/user/api-keys.
func (h *SessionHandler) ListAPIKeys(c *gin.Context) {
	keys, err := h.sessions.ListAPIKeys(c.Request.Context(), viewerID(c))
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := make([]apiKeyJSON, len(keys))
	for i, k := range keys {
		out[i] = apiKeyOf(k, "")
	}
	renderJSON(c, http.StatusOK, gin.H{"apiKeys": out})
}

// RevokeAPIKey handles DELETE /api/user/api-keys/:id.
func (h *SessionHandler) RevokeAPIKey(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if err := h.sessions.RevokeAPIKey(c.Request.Context(), viewerID(c), id); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func isUnauthorized(err error) bool { return err != nil && errorsIs(err, domain.ErrUnauthorized) }
