package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"inkwell/internal/testenv"
	"inkwell/ioc"
)

// testApp is the fully wired inkwell serving on a loopback port, on its own database and Redis
// key space.
type testApp struct {
	t    *testing.T
	URL  string
	Cfg  *ioc.Config
	DB   *testenv.DB
	App  *ioc.App // the wired app, to drive its jobs (App.Rank.RunOnce) directly
	http *http.Client
}

const testJWTSecret = "e2e-test-secret-e2e-test-secret-0123456789"

// startApp wires the app exactly as `inkwell serve` does and serves it until the test ends, on a
// database and Redis key prefix of its own.
func startApp(t *testing.T, tweak ...func(*ioc.Config)) *testApp {
	t.Helper()
	return startReplica(t, testenv.NewDB(t), testenv.NewRedis(t).Prefix, tweak...)
}

// startReplica wires and serves one inkwell instance on the database db and under the Redis key
// prefix, as `inkwell serve` on another machine behind a load balancer would run: what it shares
// with other instances on them lives in PostgreSQL and Redis only.
func startReplica(t *testing.T, db *testenv.DB, prefix string, tweak ...func(*ioc.Config)) *testApp {
	t.Helper()
	cfg := ioc.Flags(flag.NewFlagSet("test", flag.ContinueOnError))
	cfg.DatabaseURL = db.URL
	cfg.RedisURL, cfg.RedisMode = testenv.RedisURL(), testenv.RedisMode()
	cfg.RedisPrefix = prefix
	cfg.JWTSecret = testJWTSecret
	cfg.Addr = "127.0.0.1:0"
	for _, f := range tweak {
		f(cfg)
	}
	log := testenv.Logger(t)
	if err := cfg.Validate(log); err != nil {
		t.Fatalf("config: %v", err)
	}
	app, cleanup, err := initApp(cfg, log)
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
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
		cleanup()
	})
	return &testApp{t: t, URL: "http://" + ln.Addr().String(), Cfg: cfg, DB: db, App: app, http: &http.Client{}}
}

// response is a decoded HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// do sends a request; body may be nil, a string (sent as is) or any value (sent as JSON).
func (a *testApp) do(method, path, token string, body any, headers ...string) response {
	a.t.Helper()
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
			a.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.URL+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := a.http.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// expect fails the test when the status differs, showing the body.
func (r response) expect(t *testing.T, status int) response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	return r
}

// register creates a user through the API and returns its token.
func (a *testApp) register(username string) string {
	a.t.Helper()
	res := a.do("POST", "/api/users", "", map[string]any{"user": map[string]any{
		"username": username, "email": username + "@example.com", "password": "correct horse battery",
	}}).expect(a.t, http.StatusCreated)
	return res.JSON(a.t)["user"].(map[string]any)["token"].(string)
}
