package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=notification_stream.go -destination=mocks/notification_stream_mock.go -package=mocks

// NotificationStreamService is what the live notification stream needs.
type NotificationStreamService interface {
	Start(ctx context.Context, cred domain.Credential, token string, lastEventID int64, hasLast bool) (*service.NotificationStream, []domain.Notification, error)
	Next(ctx context.Context, st *service.NotificationStream) ([]domain.Notification, error)
	Poll(ctx context.Context, st *service.NotificationStream) ([]domain.Notification, error)
	Heartbeat(ctx context.Context, st *service.NotificationStream) error
	Close(st *service.NotificationStream)
	IssueTicket(ctx context.Context, cred domain.Credential) (string, time.Time, error)
	RedeemTicket(ctx context.Context, ticket string) (domain.Credential, error)
	Config() service.NotificationStreamConfig
}

// streamRoutes are the long-lived routes: no request deadline (requestDeadline), and the
// connection's read and write deadlines are the handler's to move.
var streamRoutes = map[string]bool{
	http.MethodGet + " /api/user/notifications/stream": true,
}

// streamWriteTimeout bounds each write of a stream: a client that stops reading is cut off.
const streamWriteTimeout = 10 * time.Second

// streamRetry is the reconnection delay suggested to EventSource clients (ms).
const streamRetry = 3000

// NotificationStreamHandler serves GET /api/user/notifications/stream (Server-Sent Events) and
// its tickets.
type NotificationStreamHandler struct {
	svc NotificationStreamService
	log *slog.Logger

	closeOnce sync.Once
	closing   chan struct{} // closed by Shutdown: every stream ends
}

// NewNotificationStreamHandler returns the handler.
func NewNotificationStreamHandler(svc NotificationStreamService, log *slog.Logger) *NotificationStreamHandler {
	return &NotificationStreamHandler{svc: svc, log: log, closing: make(chan struct{})}
}

// Shutdown ends every stream (the server's Shutdown runs it: an open stream is never idle, and
// would hold the shutdown until its timeout).
func (h *NotificationStreamHandler) Shutdown() { h.closeOnce.Do(func() { close(h.closing) }) }

// Ticket handles POST /api/user/notifications/stream/ticket: a single-use ticket, valid 30 s, to
// open the stream with ?ticket= (an EventSource sends no Authorization header).
func (h *NotificationStreamHandler) Ticket(c *gin.Context) {
	ticket, expires, err := h.svc.IssueTicket(c.Request.Context(), credentialOf(c))
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusCreated, gin.H{"ticket": ticket, "expiresAt": timestamp(expires)})
}

// lastEventID reads the Last-Event-ID header, else the lastEventId query parameter; ok false
// (422 sent) when it is not a notification id.
func lastEventID(c *gin.Context) (id int64, has, ok bool) {
	raw := c.GetHeader("Last-Event-ID")
	field := "Last-Event-ID"
	if raw == "" {
		raw, field = c.Query("lastEventId"), "lastEventId"
	}
	if raw == "" {
		return 0, false, true
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 0 {
		abortWith(c, http.StatusUnprocessableEntity, field, "must be a notification id")
		return 0, false, false
	}
	return id, true, true
}

// Stream handles GET /api/user/notifications/stream: the Authorization header, or ?ticket=.
func (h *NotificationStreamHandler) Stream(c *gin.Context) {
	ctx := c.Request.Context()
	cred, token := credentialOf(c), requestToken(c)
	if cred.UserID == 0 {
		ticket := c.Query("ticket")
		if ticket == "" {
			abortWith(c, http.StatusUnauthorized, "token", "is missing; send Authorization: Token <jwt>, or ?ticket= from POST /api/user/notifications/stream/ticket")
			return
		}
		var err error
		if cred, err = h.svc.RedeemTicket(ctx, ticket); err != nil {
			if errors.Is(err, domain.ErrUnauthorized) {
				abortWith(c, http.StatusUnauthorized, "ticket", "is invalid, expired or used")
				return
			}
			writeError(c, h.log, err)
			return
		}
		token = ""
	}
	last, hasLast, ok := lastEventID(c)
	if !ok {
		return
	}
	st, first, err := h.svc.Start(ctx, cred, token, last, hasLast)
	if errors.Is(err, service.ErrTooManyStreams) {
		c.Header("Retry-After", "30")
		abortWith(c, http.StatusTooManyRequests, "stream", err.Error())
		return
	}
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	defer h.svc.Close(st)

	rc := http.NewResponseController(c.Writer)
	// The server's ReadTimeout would end the request's context while the stream waits (its
	// connection's read deadline), its WriteTimeout would cut the stream: each write sets its own.
	_ = rc.SetReadDeadline(time.Time{})
	w := c.Writer
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream; charset=utf-8")
	hdr.Set("Cache-Control", "no-cache, no-store")
	hdr.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	w.WriteHeader(http.StatusOK)

	var buf bytes.Buffer
	flush := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		buf.Reset()
		return rc.Flush() == nil
	}
	buf.WriteString("retry: " + strconv.Itoa(streamRetry) + "\n\n")
	writeEvents(&buf, first)
	if !flush() {
		return
	}
	beat := time.NewTicker(h.svc.Config().Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.closing:
			buf.WriteString("event: shutdown\ndata: {}\n\n")
			flush()
			return
		case <-st.Wake:
			items, err := h.svc.Next(ctx, st)
			if err != nil {
				h.log.WarnContext(ctx, "notification stream: catching up failed; retrying at the next wake-up or heartbeat", "err", err)
			}
			if len(items) == 0 {
				continue
			}
			writeEvents(&buf, items)
		case <-st.Recheck: // a session was revoked somewhere: this one?
			if err := h.svc.Heartbeat(ctx, st); errors.Is(err, domain.ErrUnauthorized) {
				buf.WriteString("event: revoked\ndata: {}\n\n")
				flush()
				return
			}
			continue
		case <-beat.C:
			if err := h.svc.Heartbeat(ctx, st); errors.Is(err, domain.ErrUnauthorized) {
				buf.WriteString("event: revoked\ndata: {}\n\n")
				flush()
				return
			} else if err != nil {
				h.log.WarnContext(ctx, "notification stream: heartbeat check failed", "err", err)
			}
			items, err := h.svc.Poll(ctx, st)
			if err != nil {
				h.log.WarnContext(ctx, "notification stream: catching up failed", "err", err)
			}
			writeEvents(&buf, items)
			buf.WriteString(": heartbeat\n\n")
		}
		if !flush() {
			return
		}
	}
}

// writeEvents appends one "notification" event per item: id the notification's, data its JSON as
// GET /api/user/notifications renders it.
func writeEvents(buf *bytes.Buffer, items []domain.Notification) {
	for _, n := range items {
		buf.WriteString("id: ")
		buf.WriteString(strconv.FormatInt(n.ID, 10))
		buf.WriteString("\nevent: notification\ndata: ")
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(notificationOf(n)) // ends with the newline the data line needs
		buf.WriteString("\n")
	}
}
