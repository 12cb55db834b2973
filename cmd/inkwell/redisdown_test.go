//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestLogsAreJSONLinesWhileRedisIsDown builds the binary, serves against a Redis port nobody
// listens on, sends requests until the circuit breaker has opened and go-redis has logged its
// failed dials, stops the server, and checks that every line the process wrote to stderr is one
// JSON object (go-redis's own logger would write plain text) and that stdout stayed empty.
func TestLogsAreJSONLinesWhileRedisIsDown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	db := testenv.NewDB(t)
	bin := filepath.Join(t.TempDir(), "inkwell")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dead := freeAddr(t) // nothing listens there once freeAddr returns
	addr := freeAddr(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve")
	var env []string
	for _, kv := range os.Environ() { // the server's defaults, not the caller's log or tracing settings
		if !strings.HasPrefix(kv, "INKWELL_LOG_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "DATABASE_URL="+db.URL, "REDIS_URL=redis://"+dead+"/0", "INKWELL_ADDR="+addr,
		"INKWELL_ENV=dev", "INKWELL_PPROF_ADDR=", "INKWELL_METRICS_ADDR=", "INKWELL_DRAIN_DELAY=0", "INKWELL_LOG_LEVEL=debug")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	var seen []string
	wait := func(what string, done func(string) bool, poke func()) {
		t.Helper()
		tick := time.NewTicker(10 * time.Millisecond) // paces the requests that make Redis calls, not a wait for state
		defer tick.Stop()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the server ended before %s:\n%s", what, strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if !json.Valid([]byte(l)) {
					t.Fatalf("stderr line %q is not JSON", l)
				}
				if done(l) {
					return
				}
			case <-tick.C:
				if poke != nil {
					poke()
				}
			case <-ctx.Done():
				t.Fatalf("no %s:\n%s", what, strings.Join(seen, "\n"))
			}
		}
	}
	wait("serving line", func(l string) bool { return strings.Contains(l, `"msg":"serving"`) }, nil)
	client := &http.Client{Timeout: 5 * time.Second}
	get := func() {
		for _, path := range []string{"/api/articles", "/api/tags", "/api/articles/nope", "/readyz"} {
			if resp, err := client.Get("http://" + addr + path); err == nil {
				resp.Body.Close()
			}
		}
	}
	breakerOpened, dialLogged := false, false
	wait("breaker opening and go-redis dial failure", func(l string) bool {
		breakerOpened = breakerOpened || strings.Contains(l, "redis circuit breaker opened")
		dialLogged = dialLogged || (strings.Contains(l, `"component":"go-redis"`) && strings.Contains(l, "failed to dial"))
		return breakerOpened && dialLogged
	}, get)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		seen = append(seen, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	for i, l := range seen {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["msg"] == nil || rec["level"] == nil {
			t.Errorf("stderr line %d is not a JSON log line: %q", i+1, l)
		}
		if strings.Contains(l, `"duration":`) && !strings.Contains(l, `"duration":"`) {
			t.Errorf("a duration in nanoseconds: %s", l)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("serve wrote to stdout: %s", stdout.String())
	}
}
