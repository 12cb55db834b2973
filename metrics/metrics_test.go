package metrics

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRequestLabelsComeFromClosedSets: whatever method and status a request has, its labels are
// one of a fixed set, so a client inventing methods adds no series.
func TestRequestLabelsComeFromClosedSets(t *testing.T) {
	r := New(slog.New(slog.DiscardHandler))
	r.ObserveRequest("/api/articles", http.MethodGet, http.StatusOK, time.Millisecond)
	for i := range 50 {
		huge := strings.Repeat(string(rune('A'+i%26)), 20_000)
		r.ObserveRequest("unmatched", huge, http.StatusNotFound, time.Millisecond)
		r.ObserveRequest("/api/articles", "PROPFIND"+huge[:i], http.StatusMethodNotAllowed, time.Millisecond)
	}
	r.ObserveRequest("/api/articles", http.MethodGet, 1000, time.Millisecond)

	body := scrape(t, r)
	if len(body) > 200_000 {
		t.Fatalf("/metrics is %d bytes after 100 requests with invented methods", len(body))
	}
	for _, want := range []string{
		`route="/api/articles",status="200"`, `method="GET"`,
		`{method="OTHER",route="unmatched",status="404"`, `{method="OTHER",route="/api/articles",status="405"`,
		`status="other"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, "PROPFIND") || strings.Contains(body, "AAAA") {
		t.Error("a client's method became a label value")
	}
	if n := strings.Count(body, `inkwell_http_request_duration_seconds_count{`); n != 4 {
		t.Errorf("%d request series, want 4 (GET 200, OTHER 404, OTHER 405, GET other)", n)
	}
}

func scrape(t *testing.T, r *Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	b, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
