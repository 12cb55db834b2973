package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=notification.go -destination=mocks/notification_mock.go -package=mocks

// NotificationService is what the notification handlers need.
type NotificationService interface {
	List(ctx context.Context, viewerID int64, p domain.Page) (service.NotificationList, error)
	MarkRead(ctx context.Context, viewerID int64, ids []int64) (int64, error)
}

// NotificationHandler serves the signed-in user's notifications.
type NotificationHandler struct {
	svc NotificationService
	log *slog.Logger
}

// NewNotificationHandler returns the handler.
func NewNotificationHandler(svc NotificationService, log *slog.Logger) *NotificationHandler {
	return &NotificationHandler{svc: svc, log: log}
}

type notificationJSON struct {
	ID      int64  `json:"id"`
	Kind    string `json:"kind"`
	Actor   string `json:"actor"`
	Article *struct {
		Slug  string `json:"slug"`
		Title string `json:"title"`
	} `json:"article,omitempty"`
	// Detail is a notice's text (moderation.hidden, moderation.restored, report.resolved).
	Detail    string     `json:"detail,omitempty"`
	CreatedAt timestamp  `json:"createdAt"`
	Read      bool       `json:"read"`
	ReadAt    *timestamp `json:"readAt,omitempty"`
}

func notificationOf(n domain.Notification) notificationJSON {
	out := notificationJSON{ID: n.ID, Kind: n.Kind, Actor: n.ActorUsername, Detail: n.Detail, CreatedAt: timestamp(n.CreatedAt), Read: n.ReadAt != nil}
	if n.ReadAt != nil {
		t := timestamp(*n.ReadAt)
		out.ReadAt = &t
	}
	if n.ArticleSlug != "" {
		out.Article = &struct {
			Slug  string `json:"slug"`
			Title string `json:"title"`
		}{n.ArticleSlug, n.ArticleTitle}
	}
	return out
}

// List handles GET /api/user/notifications?cursor=&limit=.
func (h *NotificationHandler) List(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	l, err := h.svc.List(c.Request.Context(), viewerID(c), p)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	items := make([]notificationJSON, len(l.Items))
	for i, n := range l.Items {
		items[i] = notificationOf(n)
	}
	body := gin.H{"notifications": items, "unreadCount": l.Unread}
	if cur := encodeCursor(l.NextCursor); cur != "" {
		body["nextCursor"] = cur
	}
	renderJSON(c, http.StatusOK, body)
}

type markReadRequest struct {
	IDs []int64 `json:"ids"`
}

// MarkRead handles POST /api/user/notifications/read with {"ids": [...]}; no ids (or no body)
// marks everything read.
func (h *NotificationHandler) MarkRead(c *gin.Context) {
	var req markReadRequest
	if c.Request.ContentLength != 0 && !bindJSON(c, &req) {
		return
	}
	n, err := h.svc.MarkRead(c.Request.Context(), viewerID(c), req.IDs)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"marked": n})
}
