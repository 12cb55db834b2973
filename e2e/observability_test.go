package e2e

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/inkwell-dev/inkwell/ioc"
)

func TestObservability(t *testing.T) {
	parallel(t)
	app := startApp(t)

	t.Run("request ids are echoed, or made up when missing or unsafe", func(t *testing.T) {
		if got := app.Do("GET", "/api/tags", "", nil, "X-Request-Id", "trace-42").Header.Get("X-Request-Id"); got != "trace-42" {
			t.Fatalf("echoed %q", got)
		}
		if got := app.Do("GET", "/api/tags", "", nil).Header.Get("X-Request-Id"); len(got) < 16 {
			t.Fatalf("generated %q", got)
		}
		if got := app.Do("GET", "/api/tags", "", nil, "X-Request-Id", "bad id\twith spaces").Header.Get("X-Request-Id"); strings.ContainsAny(got, " \t") {
			t.Fatalf("unsafe id echoed: %q", got)
		}
	})
	t.Run("readyz checks the dependencies", func(t *testing.T) {
		r := app.Do("GET", "/readyz", "", nil).Expect(t, http.StatusOK)
		for _, check := range []string{"postgres", "redis", "migrations"} {
			if !strings.Contains(string(r.Body), `"`+check+`":"ok"`) {
				t.Fatalf("readyz %s lacks %s ok", r.Body, check)
			}
		}
	})
	t.Run("metrics label routes by template, never by raw path", func(t *testing.T) {
		singleInstance(t, "each process keeps its own metrics: behind a balancer /metrics answers for whichever instance serves it, not the one that served the requests")
		token := app.Register("metricsuser")
		app.Do("POST", "/api/articles", token, newArticle("Measured article")).Expect(t, http.StatusCreated)
		app.Do("GET", "/api/articles/measured-article", "", nil).Expect(t, http.StatusOK)
		app.Do("GET", "/api/articles/no-such-article", "", nil).Expect(t, http.StatusNotFound)
		body := app.metrics()
		for _, want := range []string{
			`route="/api/articles/:slug",status="200"`, `route="/api/articles/:slug",status="404"`,
			"inkwell_cache_hits_total", "inkwell_singleflight_shared_total", "inkwell_pgxpool_total_conns",
			"inkwell_read_events_published_total", "inkwell_rank_runs_total", "inkwell_jobs_done_total",
			"inkwell_jobs_attempts_total", `inkwell_pgxpool_total_conns{pool="queue"}`, "inkwell_redis_breaker_open 0",
			"inkwell_redis_breaker_rejected_total", "inkwell_cache_invalidation_subscribed", "inkwell_cache_invalidations_published_total",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		if strings.Contains(body, "measured-article") || strings.Contains(body, "no-such-article") {
			t.Error("a raw path leaked into a metric label")
		}
	})
	t.Run("metrics are served on their own listener, not the API's", func(t *testing.T) {
		requireErrorField(t, app.Do("GET", "/metrics", "", nil), http.StatusNotFound, "body")
		if !strings.Contains(app.metrics(), "inkwell_http_request_duration_seconds") {
			t.Fatal("the metrics listener does not serve the request histogram")
		}
	})
	// A client picks the method: only the standard ones become label values, the rest are OTHER,
	// so invented methods cannot grow /metrics (50 of 20 KB once added 15 MB, kept until restart).
	t.Run("request labels come from closed sets", func(t *testing.T) {
		singleInstance(t, "reads the metrics of the instance that served the requests")
		before := len(app.metrics())
		for i := range 50 {
			method := strings.Repeat(string(rune('A'+i%26)), 20_000) + strconv.Itoa(i)
			for _, path := range []string{"/api/articles", "/no/such/path"} {
				res := app.Do(method, path, "", nil)
				if res.Status != http.StatusMethodNotAllowed && res.Status != http.StatusNotFound {
					t.Fatalf("%s with a 20 KB method: %d %s", path, res.Status, res.Body)
				}
			}
		}
		body := app.metrics()
		if grown := len(body) - before; grown > 20_000 {
			t.Fatalf("/metrics grew by %d bytes after 100 requests with invented methods", grown)
		}
		if strings.Contains(body, strings.Repeat("A", 100)) {
			t.Fatal("an invented method became a label value")
		}
		for _, want := range []string{`method="OTHER",route="unmatched",status="405"`, `method="OTHER",route="unmatched",status="404"`} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
	t.Run("idempotent requests are counted by outcome, job runs by kind and outcome", func(t *testing.T) {
		singleInstance(t, "reads the metrics of the instance that served the requests")
		token := app.Register("idemmetrics")
		key := "Idempotency-Key"
		app.Do("POST", "/api/articles", token, newArticle("Counted once"), key, "k-1").Expect(t, http.StatusCreated)
		app.Do("POST", "/api/articles", token, newArticle("Counted once"), key, "k-1").Expect(t, http.StatusCreated)
		app.Do("POST", "/api/articles", token, newArticle("Another article"), key, "k-1").Expect(t, http.StatusUnprocessableEntity)
		app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "idemmetrics@example.com"}).Expect(t, http.StatusAccepted)
		done := regexp.MustCompile(`inkwell_job_duration_seconds_count\{kind="send_code",outcome="done",queue="default"\} [1-9]`)
		app.waitFor("the send_code job's run is in the metrics", func() bool { return done.MatchString(app.metrics()) })
		body := app.metrics()
		for _, want := range []string{
			`inkwell_idempotency_requests_total{outcome="executed"} 1`, `inkwell_idempotency_requests_total{outcome="replayed"} 1`,
			`inkwell_idempotency_requests_total{outcome="mismatch"} 1`, `inkwell_idempotency_requests_total{outcome="in_flight"} 0`,
			`inkwell_idempotency_requests_total{outcome="commit_unknown"} 0`,
		} {
			if !strings.Contains(body, want+"\n") {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
	// promlint is what `promtool check metrics` runs: it refuses, among others, a gauge named
	// *_total (a count that only grows is a counter, so rate() applies to it).
	t.Run("metrics pass promtool's lint", func(t *testing.T) {
		body := app.metrics()
		problems, err := promlint.New(strings.NewReader(body)).Lint()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
		checkQueriesMatchMetrics(t, body, "../deploy/grafana/dashboards/inkwell.json", "../deploy/alerts.yml")
		for _, want := range []string{"# TYPE inkwell_pgxpool_empty_acquire_total counter", "# TYPE inkwell_redis_pool_timeouts_total counter",
			"inkwell_outbox_dead ", "inkwell_outbox_oldest_unapplied_age_seconds ", `inkwell_pgxpool_max_conns{pool="api"}`} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %q", want)
			}
		}
	})
}

func TestReadyzWithRedisDown(t *testing.T) {
	parallel(t)
	app := startApp(t, func(c *ioc.Config) { c.Redis.URL = "redis://127.0.0.1:1/0" })
	// Degraded, not out of service: the balancer keeps sending traffic, which PostgreSQL serves.
	r := app.Do("GET", "/readyz", "", nil).Expect(t, http.StatusOK)
	body := string(r.Body)
	if !strings.Contains(body, `"status":"degraded"`) || !strings.Contains(body, `"redis":"failing"`) ||
		!strings.Contains(body, `"postgres":"ok"`) || strings.Contains(body, "connection refused") {
		t.Fatalf("readyz %s: want degraded with redis failing, without internal error text", r.Body)
	}
	// The API itself still answers from PostgreSQL.
	app.Do("GET", "/api/tags", "", nil).Expect(t, http.StatusOK)
}

var (
	metricName = regexp.MustCompile(`\binkwell_[a-z0-9_]*[a-z0-9]`)
	promRate   = regexp.MustCompile(`\b(?:rate|irate|increase)\((inkwell_[a-z0-9_]+)`)
	typeLine   = regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)$`)
)

// onlyWithRows are exported per (queue, status) found in the jobs table, so not by an app that has
// run no job yet.
var onlyWithRows = map[string]bool{"inkwell_jobs": true, "inkwell_jobs_oldest_ready_age_seconds": true}

// checkQueriesMatchMetrics: every inkwell metric the dashboard and alert files query is one the
// app exports (a renamed metric must take its queries along), and rate() and increase() only
// read counters and histograms (on a gauge they make up numbers).
func checkQueriesMatchMetrics(t *testing.T, exposition string, files ...string) {
	t.Helper()
	types := map[string]string{}
	for _, m := range typeLine.FindAllStringSubmatch(exposition, -1) {
		types[m[1]] = m[2]
		if m[2] == "histogram" {
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				types[m[1]+suffix] = m[2]
			}
		}
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range metricName.FindAllString(string(text), -1) {
			if types[name] == "" && !onlyWithRows[name] {
				t.Errorf("%s queries %s, which /metrics does not export", file, name)
			}
		}
		for _, m := range promRate.FindAllStringSubmatch(string(text), -1) {
			if typ := types[m[1]]; typ != "counter" && typ != "histogram" && typ != "" {
				t.Errorf("%s applies rate() or increase() to %s, a %s", file, m[1], typ)
			}
		}
	}
}
