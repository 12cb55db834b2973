package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=moderation.go -destination=mocks/moderation_mock.go -package=mocks

// ModerationService is what the moderation handlers need: roles, hiding, suspension.
type ModerationService interface {
	SetRole(ctx context.Context, cred domain.Credential, username, role string) (domain.User, error)
	HideArticle(ctx context.Context, cred domain.Credential, slug, reason string) (domain.Article, error)
	UnhideArticle(ctx context.Context, cred domain.Credential, slug, reason string) (domain.Article, error)
	HideComment(ctx context.Context, cred domain.Credential, id int64, reason string) (domain.Comment, error)
	UnhideComment(ctx context.Context, cred domain.Credential, id int64, reason string) (domain.Comment, error)
	Suspend(ctx context.Context, cred domain.Credential, username string, reason string, until *time.Time) (domain.User, error)
	Unsuspend(ctx context.Context, cred domain.Credential, username, reason string) (domain.User, error)
}

// ModerationHandler serves /api/admin and the moderators' actions under /api/moderation. The
// role checks are the service's; this layer only parses.
type ModerationHandler struct {
	svc ModerationService
	log *slog.Logger
}

// NewModerationHandler returns the handler.
func NewModerationHandler(svc ModerationService, log *slog.Logger) *ModerationHandler {
	return &ModerationHandler{svc: svc, log: log}
}

type roleRequest struct {
	Role string `json:"role"`
}

type reasonRequest struct {
	Reason string `json:"reason"`
}

type suspendRequest struct {
	Reason string `json:"reason"`
	// Until is RFC 3339, or null (or absent) for a suspension without an end.
	Until *time.Time `json:"until"`
}

// moderatedUserJSON is an account as moderation shows it.
type moderatedUserJSON struct {
	Username   string          `json:"username"`
	Role       domain.Role     `json:"role"`
	Suspension *suspensionJSON `json:"suspension"` // null when not suspended
}

type moderationJSON struct {
	Hidden bool   `json:"hidden"`
	Reason string `json:"reason,omitempty"`
}

type moderatedArticleJSON struct {
	Slug       string         `json:"slug"`
	Title      string         `json:"title"`
	Status     string         `json:"status"`
	Moderation moderationJSON `json:"moderation"`
}

type moderatedCommentJSON struct {
	ID         int64          `json:"id"`
	Body       string         `json:"body"`
	Moderation moderationJSON `json:"moderation"`
}

func moderatedUser(u domain.User, now time.Time) moderatedUserJSON {
	out := moderatedUserJSON{Username: u.Username, Role: u.Role}
	if u.Suspension.InForce(now) {
		s := suspensionOf(u.Suspension)
		out.Suspension = &s
	}
	return out
}

// moderationOf is the "moderation" member of an article or comment its author reads: nil (left
// out) unless a moderator hid it.
func moderationOf(m domain.ContentModeration) *moderationJSON {
	if !m.Hidden {
		return nil
	}
	return &moderationJSON{Hidden: true, Reason: m.Reason}
}

// SetRole handles PUT /api/admin/users/:username/role.
func (h *ModerationHandler) SetRole(c *gin.Context) {
	var req roleRequest
	if !bindJSON(c, &req) {
		return
	}
	u, err := h.svc.SetRole(c.Request.Context(), credentialOf(c), c.Param("username"), req.Role)
	h.answerUser(c, u, err)
}

// HideArticle handles POST /api/moderation/articles/:slug/hide.
func (h *ModerationHandler) HideArticle(c *gin.Context) { h.article(c, h.svc.HideArticle) }

// UnhideArticle handles POST /api/moderation/articles/:slug/unhide.
func (h *ModerationHandler) UnhideArticle(c *gin.Context) { h.article(c, h.svc.UnhideArticle) }

func (h *ModerationHandler) article(c *gin.Context, act func(context.Context, domain.Credential, string, string) (domain.Article, error)) {
	var req reasonRequest
	if !bindOptionalJSON(c, &req) {
		return
	}
	a, err := act(c.Request.Context(), credentialOf(c), c.Param("slug"), req.Reason)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"article": moderatedArticleJSON{Slug: a.Slug, Title: a.Title, Status: string(a.Status),
		Moderation: moderationJSON{Hidden: a.Moderation.Hidden, Reason: a.Moderation.Reason}}})
}

// HideComment handles POST /api/moderation/comments/:id/hide.
func (h *ModerationHandler) HideComment(c *gin.Context) { h.comment(c, h.svc.HideComment) }

// UnhideComment handles POST /api/moderation/comments/:id/unhide.
func (h *ModerationHandler) UnhideComment(c *gin.Context) { h.comment(c, h.svc.UnhideComment) }

func (h *ModerationHandler) comment(c *gin.Context, act func(context.Context, domain.Credential, int64, string) (domain.Comment, error)) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req reasonRequest
	if !bindOptionalJSON(c, &req) {
		return
	}
	cm, err := act(c.Request.Context(), credentialOf(c), id, req.Reason)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"comment": moderatedCommentJSON{ID: cm.ID, Body: cm.Body,
		Moderation: moderationJSON{Hidden: cm.Moderation.Hidden, Reason: cm.Moderation.Reason}}})
}

// Suspend handles POST /api/moderation/users/:username/suspend.
func (h *ModerationHandler) Suspend(c *gin.Context) {
	var req suspendRequest
	if !bindJSON(c, &req) {
		return
	}
	u, err := h.svc.Suspend(c.Request.Context(), credentialOf(c), c.Param("username"), req.Reason, req.Until)
	h.answerUser(c, u, err)
}

// Unsuspend handles POST /api/moderation/users/:username/unsuspend.
func (h *ModerationHandler) Unsuspend(c *gin.Context) {
	var req reasonRequest
	if !bindOptionalJSON(c, &req) {
		return
	}
	u, err := h.svc.Unsuspend(c.Request.Context(), credentialOf(c), c.Param("username"), req.Reason)
	h.answerUser(c, u, err)
}

func (h *ModerationHandler) answerUser(c *gin.Context, u domain.User, err error) {
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"user": moderatedUser(u, time.Now())})
}
