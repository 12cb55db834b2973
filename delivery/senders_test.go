package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

// gateway is an httptest server answering every POST with status and recording what it got.
type gateway struct {
	srv     *httptest.Server
	hits    atomic.Int64
	lastReq atomic.Pointer[gatewayRequest]
}

type gatewayRequest struct {
	Method, ContentType string
	Body                map[string]string
}

func newGateway(t *testing.T, status int) *gateway {
	t.Helper()
	g := &gateway{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hits.Add(1)
		raw, _ := io.ReadAll(r.Body)
		req := &gatewayRequest{Method: r.Method, ContentType: r.Header.Get("Content-Type")}
		_ = json.Unmarshal(raw, &req.Body)
		g.lastReq.Store(req)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"detail":"whatever the gateway says"}`))
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func TestWebhookSender(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status        int
		wantRejected  bool // ErrRejected, a permanent failure
		wantTransient bool // an error that is worth retrying
	}{
		{status: http.StatusOK},
		{status: http.StatusAccepted},
		{status: http.StatusNoContent},
		{status: http.StatusBadRequest, wantRejected: true},
		{status: http.StatusNotFound, wantRejected: true},
		{status: http.StatusUnprocessableEntity, wantRejected: true},
		{status: http.StatusTooManyRequests, wantTransient: true},
		{status: http.StatusInternalServerError, wantTransient: true},
		{status: http.StatusBadGateway, wantTransient: true},
		{status: http.StatusServiceUnavailable, wantTransient: true},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, tc.status)
			err := WebhookSender{URL: g.srv.URL, Client: g.srv.Client()}.Send(context.Background(), msg)
			switch {
			case tc.wantRejected:
				if !errors.Is(err, ErrRejected) || !errors.Is(err, domain.ErrPermanent) {
					t.Fatalf("status %d: %v, want ErrRejected (a domain.ErrPermanent)", tc.status, err)
				}
			case tc.wantTransient:
				if err == nil || errors.Is(err, ErrRejected) || errors.Is(err, domain.ErrPermanent) {
					t.Fatalf("status %d: %v, want a transient error", tc.status, err)
				}
			default:
				if err != nil {
					t.Fatalf("status %d: %v", tc.status, err)
				}
			}
			req := g.lastReq.Load()
			want := map[string]string{"channel": "email", "to": "a@example.com", "code": "123456", "purpose": "login"}
			if g.hits.Load() != 1 || req.Method != http.MethodPost || req.ContentType != "application/json" || !equalMaps(req.Body, want) {
				t.Fatalf("gateway got %d requests, last %+v; want one JSON POST of %v", g.hits.Load(), req, want)
			}
		})
	}

	t.Run("unreachable_gateway_is_transient", func(t *testing.T) {
		t.Parallel()
		g := newGateway(t, http.StatusOK)
		url := g.srv.URL
		g.srv.Close()
		err := WebhookSender{URL: url, Client: &http.Client{}}.Send(context.Background(), msg)
		if err == nil || errors.Is(err, domain.ErrPermanent) {
			t.Fatalf("closed gateway: %v, want a transient error", err)
		}
	})
	t.Run("malformed_url_is_rejected", func(t *testing.T) {
		t.Parallel()
		err := WebhookSender{URL: "http://[::1", Client: &http.Client{}}.Send(context.Background(), msg)
		if !errors.Is(err, ErrRejected) {
			t.Fatalf("malformed URL: %v, want ErrRejected", err)
		}
	})
}

// TestResilientWebhook runs the wrapper over real HTTP: a failing gateway is retried and then
// shut out by the breaker; a rejecting one is asked once.
func TestResilientWebhook(t *testing.T) {
	t.Parallel()
	t.Run("server_errors_are_retried_then_trip_the_breaker", func(t *testing.T) {
		t.Parallel()
		g := newGateway(t, http.StatusInternalServerError)
		r, _ := newResilient(WebhookSender{URL: g.srv.URL, Client: g.srv.Client()}, resilientOpts{Retries: 2, FailuresToOpen: 6})
		for range 2 {
			if err := r.Send(context.Background(), msg); err == nil || errors.Is(err, ErrBreakerOpen) {
				t.Fatalf("send: %v, want the 500", err)
			}
		}
		if g.hits.Load() != 6 || r.State() != "open" {
			t.Fatalf("%d requests, breaker %s; want 6 (3 attempts × 2 sends) and open", g.hits.Load(), r.State())
		}
		if err := r.Send(context.Background(), msg); !errors.Is(err, ErrBreakerOpen) || g.hits.Load() != 6 {
			t.Fatalf("send while open: %v after %d requests", err, g.hits.Load())
		}
	})
	t.Run("rejection_is_asked_once", func(t *testing.T) {
		t.Parallel()
		g := newGateway(t, http.StatusBadRequest)
		r, _ := newResilient(WebhookSender{URL: g.srv.URL, Client: g.srv.Client()}, resilientOpts{Retries: 3, FailuresToOpen: 1})
		for range 3 {
			if err := r.Send(context.Background(), msg); !errors.Is(err, domain.ErrPermanent) {
				t.Fatalf("send: %v, want a permanent failure", err)
			}
		}
		if g.hits.Load() != 3 || r.State() != "closed" {
			t.Fatalf("%d requests, breaker %s; want 3 and closed", g.hits.Load(), r.State())
		}
	})
}

func TestLogSender(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := LogSender{Log: slog.New(slog.NewTextHandler(&buf, nil))}
	if err := s.Send(context.Background(), Message{Channel: "phone", Address: "+4915112345678", Code: "909090"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"channel=phone", "to=+4915112345678", "code=909090"} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("log %q lacks %q", buf.String(), want)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
