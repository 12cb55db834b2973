// Package apptest serves the fully wired inkwell on a loopback port for end-to-end and
// fault-injection tests, each on its own database and Redis key space.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// App is the fully wired inkwell serving on a loopback port, on its own database and Redis
// key space.
type App struct {
	T   *testing.T // the test that started it (nil when a fuzz target did: use Fetch)
	URL string
	// MetricsURL is the instance's GET /metrics, on its own listener (a balancer's App: the
	// first instance's, as Cfg and Wired are; empty for a process, StartProcess).
	MetricsURL string
	Fleet      []*App // the instances behind URL when it is a balancer's (StartFleet); nil for one instance
	Cfg        *ioc.Config
	DB         *testenv.DB
	Wired      *inkwell.App // the wired process, to drive its jobs (Wired.Rank.RunOnce) directly; nil for a process (StartProcess)
	// Release is the binary a process instance runs (StartProcess); zero for an in-process one.
	Release Release
	HTTP    *http.Client
	// AfterWrite, when set, runs after each answered request that is not a GET or HEAD, before
	// Fetch returns (the pooled e2e run waits there for its replica to replay the write).
	AfterWrite func() error
	stop       func()
}

// Stop shuts the instance down before the test ends, as SIGTERM would: it drains requests, stops
// the jobs and workers, gives the ranking lock up and closes its pools. The test's cleanup then
// has nothing left to do.
func (a *App) Stop() {
	a.T.Helper()
	a.stop()
}

const JWTSecret = "e2e-test-secret-e2e-test-secret-0123456789"

// Start wires the app exactly as `inkwell serve` does and serves it until the test ends, on a
// database and Redis key prefix of its own.
func Start(t testing.TB, tweak ...func(*ioc.Config)) *App {
	t.Helper()
	return StartReplica(t, testenv.NewDB(t), testenv.NewRedis(t).Prefix, tweak...)
}

// StartReplica wires and serves one inkwell instance on the database db and under the Redis key
// prefix, as `inkwell serve` on another machine behind a load balancer would run: what it shares
// with other instances on them lives in PostgreSQL and Redis only.
func StartReplica(t testing.TB, db *testenv.DB, prefix string, tweak ...func(*ioc.Config)) *App {
	t.Helper()
	cfg := ioc.Flags(flag.NewFlagSet("test", flag.ContinueOnError))
	cfg.Database.URL = withPoolMaxConns(db.URL, AppPoolMaxConns)
	cfg.Redis.URL, cfg.Redis.Mode = testenv.RedisURL(), testenv.RedisMode()
	cfg.Redis.Prefix = prefix
	cfg.Auth.JWTSecret = JWTSecret
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.Telemetry.MetricsAddr = "127.0.0.1:0"
	cfg.Server.DrainDelay = 0 // no balancer watches a test instance's /readyz: stop at once
	cfg.ConfigurePgPool = testenv.LimitPool
	cfg.Media.URL = "file://" + t.TempDir() // uploads never land in the source tree
	for _, f := range tweak {
		f(cfg)
	}
	log := testenv.Logger(t)
	if err := cfg.Validate(log); err != nil {
		t.Fatalf("config: %v", err)
	}
	app, cleanup, err := inkwell.InitApp(cfg, log)
	if err != nil {
		t.Fatalf("wire app: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("shutdown: %v", err)
			}
			cleanup()
		})
	}
	t.Cleanup(stop)
	tt, _ := t.(*testing.T) // nil for a fuzz target's instance, which calls Fetch
	a := &App{T: tt, URL: "http://" + ln.Addr().String(), Cfg: cfg, DB: db, Wired: app, HTTP: &http.Client{}, stop: stop}
	if app.Metrics != nil {
		a.MetricsURL = "http://" + app.Metrics.Addr() + "/metrics"
	}
	return a
}

// Metrics scrapes the instance's metrics listener (a balancer's App: the first instance's) and
// returns the exposition text.
func (a *App) Metrics() string {
	a.T.Helper()
	if a.MetricsURL == "" {
		a.T.Fatal("this instance serves no metrics (INKWELL_METRICS_ADDR is empty)")
	}
	res, err := a.HTTP.Get(a.MetricsURL)
	if err != nil {
		a.T.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		a.T.Fatalf("GET %s: %d, %v", a.MetricsURL, res.StatusCode, err)
	}
	return string(body)
}

// AppPoolMaxConns caps each of a test instance's two PostgreSQL pools (the app's and the job
// queue's; `inkwell serve` sizes them 20 and 3+concurrency/4) through pool_max_conns in its
// DATABASE_URL. Tests of several packages share the server's max_connections (100 by default)
// while `make test` runs them side by side, and a suite keeps many instances up at once (a parent
// test's instance lives while its parallel subtests run): the Makefile's -p counts on this cap.
const AppPoolMaxConns = 8

// withPoolMaxConns sets pool_max_conns=n in a PostgreSQL URL that does not set it already.
func withPoolMaxConns(databaseURL string, n int) string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return databaseURL // the app reports the bad URL
	}
	q := u.Query()
	if !q.Has("pool_max_conns") {
		q.Set("pool_max_conns", strconv.Itoa(n))
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r Response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Do sends a request; body may be nil, a string (sent as is), bytes or any value (sent as JSON).
// A request that gets no answer fails the test.
func (a *App) Do(method, path, token string, body any, headers ...string) Response {
	a.T.Helper()
	res, err := a.Fetch(nil, method, path, token, body, headers...)
	if err != nil {
		a.T.Fatal(err)
	}
	return res
}

// Fetch is Do for any goroutine: failures come back as errors, never as t.Fatal (which only the
// test's own goroutine may call). client nil means a.HTTP.
func (a *App) Fetch(client *http.Client, method, path, token string, body any, headers ...string) (Response, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return Response{}, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.URL+path, r)
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if client == nil {
		client = a.HTTP
	}
	res, err := client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	if a.AfterWrite != nil && method != http.MethodGet && method != http.MethodHead {
		if err := a.AfterWrite(); err != nil {
			return Response{}, fmt.Errorf("%s %s: after the write: %w", method, path, err)
		}
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: raw}, nil
}

// Expect fails the test when the status differs, showing the body (and, behind a balancer, which
// instance answered).
func (r Response) Expect(t *testing.T, status int) Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d%s; body: %s", r.Status, status, r.ServedBy(), r.Body)
	}
	return r
}

// ServedBy is " (served by appN)" for an answer that came through StartBalancer, else "".
func (r Response) ServedBy() string {
	if s := r.Header.Get(ServedByHeader); s != "" {
		return " (served by " + s + ")"
	}
	return ""
}

// Register creates a user through the API and returns its token.
func (a *App) Register(username string) string {
	a.T.Helper()
	res := a.Do("POST", "/api/users", "", map[string]any{"user": map[string]any{
		"username": username, "email": username + "@example.com", "password": "correct horse battery",
	}}).Expect(a.T, http.StatusCreated)
	return res.JSON(a.T)["user"].(map[string]any)["token"].(string)
}

// Article returns the "article" object of a response, failing the test when there is none.
func (r Response) Article(t *testing.T) map[string]any {
	t.Helper()
	a, ok := r.JSON(t)["article"].(map[string]any)
	if !ok {
		t.Fatalf("no article in %s", r.Body)
	}
	return a
}

// NewArticle is the body of a create-article request with the given title and tags.
func NewArticle(title string, tags ...string) map[string]any {
	return map[string]any{"article": map[string]any{
		"title": title, "description": "about " + title, "body": "body of " + title, "tagList": tags,
	}}
}
