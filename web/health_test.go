package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/web"
)

// fakeReadiness answers Ready with fixed check results.
type fakeReadiness map[string]error

func (f fakeReadiness) Ready(context.Context) map[string]error { return f }

func TestReadyz(t *testing.T) {
	t.Parallel()
	down := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	tests := []struct {
		name       string
		checks     fakeReadiness
		wantStatus int
		wantState  string
		wantChecks map[string]string
	}{
		{
			name:       "everything answers",
			checks:     fakeReadiness{"postgres": nil, "redis": nil, "migrations": nil},
			wantStatus: http.StatusOK, wantState: "ready",
			wantChecks: map[string]string{"postgres": "ok", "redis": "ok", "migrations": "ok"},
		},
		{
			name:       "redis down is degraded, still in service",
			checks:     fakeReadiness{"postgres": nil, "redis": down, "migrations": nil},
			wantStatus: http.StatusOK, wantState: "degraded",
			wantChecks: map[string]string{"postgres": "ok", "redis": "failing", "migrations": "ok"},
		},
		{
			name:       "the media store failing is degraded, still in service",
			checks:     fakeReadiness{"postgres": nil, "redis": nil, "migrations": nil, "media": down},
			wantStatus: http.StatusOK, wantState: "degraded",
			wantChecks: map[string]string{"postgres": "ok", "redis": "ok", "migrations": "ok", "media": "failing"},
		},
		{
			name:       "postgres down is not ready",
			checks:     fakeReadiness{"postgres": down, "redis": nil, "migrations": down},
			wantStatus: http.StatusServiceUnavailable, wantState: "not ready",
			wantChecks: map[string]string{"postgres": "failing", "redis": "ok", "migrations": "failing"},
		},
		{
			name:       "migrations missing is not ready",
			checks:     fakeReadiness{"postgres": nil, "redis": nil, "migrations": down},
			wantStatus: http.StatusServiceUnavailable, wantState: "not ready",
			wantChecks: map[string]string{"postgres": "ok", "redis": "ok", "migrations": "failing"},
		},
		{
			name:       "postgres and redis down is not ready",
			checks:     fakeReadiness{"postgres": down, "redis": down, "migrations": down},
			wantStatus: http.StatusServiceUnavailable, wantState: "not ready",
			wantChecks: map[string]string{"postgres": "failing", "redis": "failing", "migrations": "failing"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, slog.New(slog.DiscardHandler), web.Handlers{Readiness: tc.checks})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if strings.Contains(rec.Body.String(), "refused") {
				t.Fatalf("internal error text in %s", rec.Body)
			}
			var body struct {
				Status string            `json:"status"`
				Checks map[string]string `json:"checks"`
				Detail string            `json:"detail"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if body.Status != tc.wantState {
				t.Fatalf("status %q, want %q", body.Status, tc.wantState)
			}
			for name, want := range tc.wantChecks {
				if body.Checks[name] != want {
					t.Errorf("check %s = %q, want %q", name, body.Checks[name], want)
				}
			}
			if tc.wantState == "degraded" && tc.checks["redis"] != nil && !strings.Contains(body.Detail, "PostgreSQL") {
				t.Errorf("degraded body does not say the API serves from PostgreSQL: %s", rec.Body)
			}
		})
	}
}

// TestReadyzWhileDraining: once the drain has started, readiness is 503 "draining" whatever the
// dependencies say (they are not even asked), and liveness stays 200.
func TestReadyzWhileDraining(t *testing.T) {
	t.Parallel()
	drain := web.NewDrain()
	asked := 0
	checks := countingReadiness{n: &asked}
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, slog.New(slog.DiscardHandler), web.Handlers{Readiness: checks, Drain: drain})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	if rec := get("/readyz"); rec.Code != http.StatusOK {
		t.Fatalf("before the drain: %d %s", rec.Code, rec.Body)
	}
	drain.Start()
	rec := get("/readyz")
	var body struct{ Status, Detail string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusServiceUnavailable || body.Status != "draining" {
		t.Fatalf("while draining: %d %s, want 503 draining", rec.Code, rec.Body)
	}
	if asked != 1 {
		t.Errorf("dependencies checked %d times, want once (before the drain)", asked)
	}
	if rec := get("/healthz"); rec.Code != http.StatusOK {
		t.Fatalf("healthz while draining: %d", rec.Code)
	}
}

type countingReadiness struct{ n *int }

func (c countingReadiness) Ready(context.Context) map[string]error {
	*c.n++
	return map[string]error{"postgres": nil}
}
