package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"http://127.0.0.1:18080/x", "http://localhost:1/", "http://[::1]:8080/api"} {
		if _, err := checkLoopbackURL(ok); err != nil {
			t.Errorf("checkLoopbackURL(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"http://10.0.0.1/", "http://example.com/", "https://127.0.0.1/", "http://0.0.0.0:80/"} {
		if _, err := checkLoopbackURL(bad); err == nil {
			t.Errorf("checkLoopbackURL(%q) = nil, want an error", bad)
		}
	}
	if err := checkLoopbackAddr("127.0.0.1:18090"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{":18090", "0.0.0.0:18090", "192.168.1.2:80"} {
		if err := checkLoopbackAddr(bad); err == nil {
			t.Errorf("checkLoopbackAddr(%q) = nil, want an error", bad)
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond, 0: time.Millisecond} {
		if got := percentile(d, q); got != want {
			t.Errorf("percentile(1..100ms, %v) = %v, want %v", q, got, want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(nil) = %v", got)
	}
}

func TestParseProcSet(t *testing.T) {
	t.Parallel()
	if ps, err := parseProcSet("redis=12,13"); err != nil || ps.Label != "redis" || len(ps.pids) != 2 {
		t.Errorf("parseProcSet(redis=12,13) = %+v, %v", ps, err)
	}
	if ps, err := parseProcSet("pg=comm:postgres"); err != nil || ps.comm != "postgres" {
		t.Errorf("parseProcSet(pg=comm:postgres) = %+v, %v", ps, err)
	}
	for _, bad := range []string{"redis", "=1", "x=abc", "x=-1"} {
		if _, err := parseProcSet(bad); err == nil {
			t.Errorf("parseProcSet(%q) = nil error", bad)
		}
	}
}

// The ceiling answers with an article-shaped document of about a single article's size.
func TestCeilingDocument(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	newCeilingEngine().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ceiling", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if n := rec.Body.Len(); n < 500 || n > 900 {
		t.Errorf("body is %d bytes, want about 600-800", n)
	}
	var doc struct {
		Article struct{ Slug string } `json:"article"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.Article.Slug == "" {
		t.Errorf("body %q: %v", rec.Body.String(), err)
	}
}

// measure counts only successes inside the window and reports errors separately.
func TestMeasure(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/fail") {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		n.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	cfg := runConfig{concurrency: 1, duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, timeout: time.Second}
	ok := measure(target{Name: "ok", URL: srv.URL + "/ok"}, cfg)
	if ok.Requests == 0 || ok.Errors != 0 || ok.BytesPerRsp != 11 || ok.P50Ms <= 0 || ok.P99Ms < ok.P50Ms {
		t.Errorf("ok target: %+v", ok)
	}
	if int64(ok.Requests) >= n.Load() {
		t.Errorf("%d requests counted of %d served: the warm-up should not count", ok.Requests, n.Load())
	}
	bad := measure(target{Name: "bad", URL: srv.URL + "/fail"}, cfg)
	if bad.Requests != 0 || bad.Errors == 0 || !strings.Contains(bad.ErrorSample, "500") {
		t.Errorf("failing target: %+v", bad)
	}
}
