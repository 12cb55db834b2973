package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/requestid"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// lockedBuffer is a log destination the router's goroutines may share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines decodes every JSON line written so far.
func (b *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// requestIDHandler adds the request id as the process logger does (ioc.NewLogger).
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := requestid.From(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

// TestAccessLog: one line per request with method, route template, status, duration in ms, the
// client IP as the trusted proxy names it, the signed-in user's id and the request id; probes
// and scrapes only at debug.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	logger := slog.New(requestIDHandler{slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo})})
	ctrl := gomock.NewController(t)
	users := mocks.NewMockUserService(ctrl)
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes, TrustedProxies: []string{"192.0.2.1"}}, logger, web.Handlers{
		Auth:     web.NewAuthenticator(users, logger),
		Users:    web.NewUserHandler(users, logger),
		Profiles: web.NewProfileHandler(mocks.NewMockProfileService(ctrl), logger),
		Articles: web.NewArticleHandler(mocks.NewMockArticleService(ctrl), nil, logger),
		Comments: web.NewCommentHandler(mocks.NewMockCommentService(ctrl), logger),
	})
	b := bundle{users: users, router: router}
	expectAuth(users)
	users.EXPECT().Current(gomock.Any(), authedID).Return(jake, nil)

	req := newRequest(http.MethodGet, "/api/user", "", map[string]string{"Authorization": "Token TOKEN",
		"X-Forwarded-For": "203.0.113.9", "X-Request-Id": "req-access-1"})
	req.RemoteAddr = "192.0.2.1:4000"
	requireStatus(t, b.do(req), http.StatusOK)
	anon := newRequest(http.MethodPost, "/api/profiles/x/follow", "", map[string]string{"X-Forwarded-For": "203.0.113.9"})
	anon.RemoteAddr = "198.51.100.7:4000" // not a trusted proxy: its X-Forwarded-For is ignored
	requireStatus(t, b.do(anon), http.StatusUnauthorized)
	for _, probe := range []string{"/healthz", "/readyz"} {
		b.do(newRequest(http.MethodGet, probe, "", nil))
	}

	lines := out.lines(t)
	var access []map[string]any
	for _, l := range lines {
		if l["msg"] == "request" {
			access = append(access, l)
		}
	}
	if len(access) != 2 {
		t.Fatalf("%d access lines at info, want 2 (probes at debug):\n%v", len(access), lines)
	}
	got := access[0]
	for k, want := range map[string]any{"level": "INFO", "method": "GET", "route": "/api/user", "status": float64(200),
		"client_ip": "203.0.113.9", "user_id": float64(authedID), "request_id": "req-access-1"} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v (line %v)", k, got[k], want, got)
		}
	}
	if d, ok := got["duration_ms"].(float64); !ok || d < 0 {
		t.Errorf("duration_ms = %v", got["duration_ms"])
	}
	anonLine := access[1]
	if anonLine["client_ip"] != "198.51.100.7" || anonLine["route"] != "/api/profiles/:username/follow" || anonLine["status"] != float64(401) {
		t.Errorf("anonymous line %v", anonLine)
	}
	if _, ok := anonLine["user_id"]; ok {
		t.Errorf("anonymous request logged a user id: %v", anonLine)
	}
	if id, _ := anonLine["request_id"].(string); id == "" {
		t.Errorf("no generated request id: %v", anonLine)
	}

	// At debug the probes are there.
	var dbg lockedBuffer
	dlog := slog.New(slog.NewJSONHandler(&dbg, &slog.HandlerOptions{Level: slog.LevelDebug}))
	probeRouter := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, dlog, web.Handlers{Auth: web.NewAuthenticator(users, dlog),
		Users: web.NewUserHandler(users, dlog), Profiles: web.NewProfileHandler(mocks.NewMockProfileService(ctrl), dlog),
		Articles: web.NewArticleHandler(mocks.NewMockArticleService(ctrl), nil, dlog), Comments: web.NewCommentHandler(mocks.NewMockCommentService(ctrl), dlog)})
	bundle{router: probeRouter}.do(newRequest(http.MethodGet, "/healthz", "", nil))
	if l := dbg.lines(t); len(l) != 1 || l[0]["level"] != "DEBUG" || l[0]["route"] != "/healthz" {
		t.Fatalf("healthz at debug: %v", l)
	}
}
