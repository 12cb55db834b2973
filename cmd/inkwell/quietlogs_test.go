package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestHealthyWritesLogOnlyTheirRequests serves with PostgreSQL and Redis healthy and sends the
// writes that wait for every instance's acknowledgement of a cache change (a follow, a favorite,
// a logout), then stops the server: nothing above info was logged, and go-redis logged nothing.
// (Each such write used to log go-redis warnings: a 500 ms wait sent as BLPOP's timeout, which
// go-redis rounds up to a second and reports.)
func TestHealthyWritesLogOnlyTheirRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server")
	}
	db := testenv.NewDB(t)
	addr := freeAddr(t)
	args := []string{"serve", "--addr", addr, "--database-url", db.URL, "--redis-url", testenv.RedisURL(),
		"--redis-mode", testenv.RedisMode(), "--redis-prefix", testenv.NewRedis(t).Prefix,
		"--jwt-secret", "quiet-logs-test-secret-0123456789abcdef", "--env", "dev", "--log-level", "info", "--log-format", "json",
		"--metrics-addr=", "--pprof-addr=", "--drain-delay", "0s", "--migrate-on-start=false"}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := run(serveCtx, args, io.Discard, pw)
		pw.Close()
		served <- err
	}()
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	for serving := false; !serving; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server ended before serving: %v\n%s", <-served, strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			serving = strings.Contains(l, `"msg":"serving"`)
		case <-ctx.Done():
			t.Fatalf("never served:\n%s", strings.Join(seen, "\n"))
		}
	}

	base := "http://" + addr
	call := func(method, path, token string, body any, want int) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Token "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, res.StatusCode, out, want)
		}
		return out
	}
	register := func(name string) string {
		out := call("POST", "/api/users", "", map[string]any{"user": map[string]any{
			"username": name, "email": name + "@example.com", "password": "correct horse battery"}}, http.StatusCreated)
		return out["user"].(map[string]any)["token"].(string)
	}
	author, reader := register("quiet_author"), register("quiet_reader")
	call("POST", "/api/profiles/quiet_author/follow", reader, nil, http.StatusOK)
	art := call("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Quiet", "description": "d", "body": "b", "tagList": []string{}}}, http.StatusCreated)
	slug := art["article"].(map[string]any)["slug"].(string)
	call("POST", "/api/articles/"+slug+"/favorite", reader, nil, http.StatusOK)
	call("DELETE", "/api/articles/"+slug+"/favorite", reader, nil, http.StatusOK)
	call("POST", "/api/users/logout", reader, nil, http.StatusNoContent)

	stop()
	for l := range lines {
		seen = append(seen, l)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	for _, l := range seen {
		var rec struct{ Level, Msg, Component string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("not a JSON log line: %q", l)
			continue
		}
		if rec.Level == "WARN" || rec.Level == "ERROR" || rec.Component == "go-redis" {
			t.Errorf("logged on a healthy path: %s", l)
		}
	}
}
