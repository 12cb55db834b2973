package web

import (
	"bytes"
	"context"
	"errors"
	"io"
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
	// Logout ends the access token's session; with all, every session of its user.
	Logout(ctx context.Context, accessToken string, all bool) error
	ListSessions(ctx context.Context, cred domain.Credential) ([]domain.SessionInfo, error)
	RevokeSession(ctx context.Context, userID int64, sessionID string) error
	CreateAPIKey(ctx context.Context, userID int64, name string, scopes []string) (domain.APIKey, string, error)
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

type logoutRequest struct {
	All bool `json:"all"`
}

// Logout handles POST /api/users/logout: the session of the presented access token ends (with
// {"all": true}, every session of the user), its refresh tokens stop working at once and its
// access tokens on every instance before the answer. The body is optional. API keys are refused
// before this (SessionOnly): a key is revoked by DELETE /api/user/api-keys/:id.
func (h *SessionHandler) Logout(c *gin.Context) {
	var req logoutRequest
	if !bindOptionalJSON(c, &req) {
		return
	}
	if err := h.sessions.Logout(c.Request.Context(), requestToken(c), req.All); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

type sessionJSON struct {
	ID         string     `json:"id"`
	UserAgent  string     `json:"userAgent"`
	CreatedAt  timestamp  `json:"createdAt"`
	LastUsedAt *timestamp `json:"lastUsedAt"` // the last refresh; null until the first
	Current    bool       `json:"current"`
}

// ListSessions handles GET /api/user/sessions: the user's live sessions, the caller's marked.
func (h *SessionHandler) ListSessions(c *gin.Context) {
	list, err := h.sessions.ListSessions(c.Request.Context(), credentialOf(c))
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := make([]sessionJSON, len(list))
	for i, s := range list {
		out[i] = sessionJSON{ID: s.ID, UserAgent: s.UserAgent, CreatedAt: timestamp(s.CreatedAt), Current: s.Current}
		if s.LastUsedAt != nil {
			t := timestamp(*s.LastUsedAt)
			out[i].LastUsedAt = &t
		}
	}
	renderJSON(c, http.StatusOK, gin.H{"sessions": out})
}

// RevokeSession handles DELETE /api/user/sessions/:id; another user's session is 404.
func (h *SessionHandler) RevokeSession(c *gin.Context) {
	if err := h.sessions.RevokeSession(c.Request.Context(), viewerID(c), c.Param("id")); err != nil {
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
	Scopes     []string   `json:"scopes"`
	CreatedAt  timestamp  `json:"createdAt"`
	LastUsedAt *timestamp `json:"lastUsedAt"`
}

func apiKeyOf(k domain.APIKey, key string) apiKeyJSON {
	out := apiKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Key: key, Scopes: make([]string, len(k.Scopes)), CreatedAt: timestamp(k.CreatedAt)}
	for i, s := range k.Scopes {
		out.Scopes[i] = string(s)
	}
	if k.LastUsedAt != nil {
		t := timestamp(*k.LastUsedAt)
		out.LastUsedAt = &t
	}
	return out
}

type createAPIKeyRequest struct {
	APIKey struct {
		Name   string   `json:"name"`
		Scopes []string `json:"scopes"` // "read" and/or "write"; absent or null: ["write"]; [] is refused
	} `json:"apiKey"`
}

// CreateAPIKey handles POST /api/user/api-keys; the key is in this answer and nowhere else, ever.
func (h *SessionHandler) CreateAPIKey(c *gin.Context) {
	var req createAPIKeyRequest
	if !bindJSON(c, &req) {
		return
	}
	k, key, err := h.sessions.CreateAPIKey(c.Request.Context(), viewerID(c), req.APIKey.Name, req.APIKey.Scopes)
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

// bindOptionalJSON is bindJSON for a body that may be left out: an empty one binds nothing.
func bindOptionalJSON(c *gin.Context, dst any) bool {
	raw, err := io.ReadAll(c.Request.Body)
	if err == nil && len(bytes.TrimSpace(raw)) == 0 {
		return true
	}
	c.Request.Body = io.NopCloser(io.MultiReader(bytes.NewReader(raw), c.Request.Body))
	return bindJSON(c, dst)
}

func isUnauthorized(err error) bool { return err != nil && errorsIs(err, domain.ErrUnauthorized) }
