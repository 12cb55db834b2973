package apptest

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// StartProcess runs `inkwell serve` of rel as a process of its own on db and the Redis key
// prefix until the test ends, configured as a fleet instance of StartFleet is (tweaks included:
// each setting a tweak changes reaches the process as its environment variable; a setting the
// binary does not know is ignored by it, as an operator's would be). Its PostgreSQL connections go
// through a testenv.BudgetProxy, so they count in the tests' connection budget. The App has no
// Wired: a test that drives an instance's internals cannot run on a process. Its stop is SIGTERM;
// the test fails when the process exits on its own, does not exit cleanly, or reports a data race.
func StartProcess(t testing.TB, rel Release, db *testenv.DB, prefix string, tweak ...func(*ioc.Config)) *App {
	t.Helper()
	cfg, env := processConfig(t, db, prefix, tweak)
	if rel.Name != workingTree {
		env = append(env, previousReleaseEnv(t, cfg)...)
	}
	p := &process{t: t, rel: rel, out: &tailBuffer{max: processOutputMax}, exited: make(chan struct{}), addr: make(chan string, 1), metricsAddr: make(chan string, 1)}
	p.start(env)
	tt, _ := t.(*testing.T)
	app := &App{T: tt, Cfg: cfg, DB: db, HTTP: &http.Client{}, Release: rel, stop: p.stop}
	select {
	case addr := <-p.addr:
		app.URL = "http://" + addr
		// A release with a metrics listener names it before it serves; an older one (v0.1.0)
		// serves GET /metrics on the API's port.
		select {
		case m := <-p.metricsAddr:
			app.MetricsURL = "http://" + m + "/metrics"
		default:
			app.MetricsURL = app.URL + "/metrics"
		}
	case <-p.exited:
		t.Fatalf("%s exited before it served (%v); its output:\n%s", rel.Name, p.waitErr, p.out)
	case <-time.After(processStartWait):
		t.Fatalf("%s did not serve within %v; its output:\n%s", rel.Name, processStartWait, p.out)
	}
	p.waitReady(app)
	return app
}

// processStartWait bounds a process's start, and processOutputMax the output kept of it (the
// end: what a failing test shows).
const (
	processStartWait = time.Minute
	processOutputMax = 1 << 20
)

// processConfig is the configuration of a process instance, and the environment variables that
// give it to the binary: those of the settings whose value differs from the default.
func processConfig(t testing.TB, db *testenv.DB, prefix string, tweak []func(*ioc.Config)) (*ioc.Config, []string) {
	t.Helper()
	fs := flag.NewFlagSet("process", flag.ContinueOnError)
	cfg := ioc.Flags(fs)
	defaults := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { defaults[f.Name] = f.Value.String() })

	cfg.Database.URL = fleetDatabaseURL(testenv.BudgetProxy(t, db.URL))
	cfg.Redis.URL, cfg.Redis.Mode, cfg.Redis.Prefix = testenv.RedisURL(), testenv.RedisMode(), prefix
	cfg.Auth.JWTSecret = JWTSecret
	cfg.Server.Addr = "127.0.0.1:0" // the process logs the port it got ("serving")
	cfg.Telemetry.LogFormat, cfg.Telemetry.LogLevel = "json", "info"
	// As a deployment behind the balancer would be: the balancer (HAProxy on loopback) is a trusted
	// proxy, so a test's traceparent is continued; no fixed metrics port that two processes would
	// share; and a stop needs no drain (no balancer health check to wait for).
	cfg.Server.TrustedProxies = "127.0.0.1,::1"
	cfg.Telemetry.MetricsAddr = "127.0.0.1:0"
	cfg.Server.DrainDelay = 0
	cfg.Media.URL = "file://" + t.TempDir() // uploads never land in the source tree
	for _, f := range tweak {
		f(cfg)
	}

	var env []string
	reachedFlags := flag.NewFlagSet("reached", flag.ContinueOnError)
	reached := ioc.Flags(reachedFlags)
	fs.VisitAll(func(f *flag.Flag) {
		value := f.Value.String()
		if value == defaults[f.Name] {
			return
		}
		name := settingEnv.FindStringSubmatch(f.Usage)
		if name == nil {
			t.Fatalf("setting -%s names no environment variable in its help text", f.Name)
		}
		env = append(env, name[1]+"="+value)
		if err := reachedFlags.Set(f.Name, value); err != nil {
			t.Fatalf("setting -%s=%q: %v", f.Name, value, err)
		}
	})
	// A tweak of a field no setting carries would silently not reach the process.
	if field := firstDifference(cfg, reached); field != "" {
		t.Fatalf("a tweak sets ioc.Config.%s, which no setting carries to a process: run the test in process (see e2e's inProcess)", field)
	}
	if err := cfg.Validate(nil); err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg, env
}

// previousReleaseEnv gives the previous release (v0.1.0) what this one reads from a setting it
// names otherwise: the SMTP server of INKWELL_MAIL_URL as the INKWELL_MAIL_* settings it read
// (CHANGELOG, "Upgrading": an operator sets both forms during the upgrade). Its local cache tier
// keeps copies a minute (it still reads INKWELL_CACHE_LOCAL_TTL, now a constant here): longer than
// any test waits, so what drops them on the previous release is the invalidation message alone.
func previousReleaseEnv(t testing.TB, cfg *ioc.Config) []string {
	t.Helper()
	env := []string{"INKWELL_CACHE_LOCAL_TTL=1m"}
	if cfg.Mail.URL == "" {
		return env
	}
	s, err := ioc.ParseMailURL(cfg.Mail.URL)
	if err != nil {
		t.Fatalf("INKWELL_MAIL_URL: %v", err)
	}
	return append(env, "INKWELL_MAIL_HOST="+s.Host, fmt.Sprintf("INKWELL_MAIL_PORT=%d", s.Port),
		"INKWELL_MAIL_USERNAME="+s.Username, "INKWELL_MAIL_PASSWORD="+s.Password, "INKWELL_MAIL_TLS="+s.TLS)
}

// settingEnv finds the variable a setting's help text names: "... (env INKWELL_X)".
var settingEnv = regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]*)\)$`)

// firstDifference names the first exported field, functions aside, that differs between a and b.
func firstDifference(a, b *ioc.Config) string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if !f.IsExported() || f.Type.Kind() == reflect.Func {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return f.Name
		}
	}
	return ""
}

// process is one running binary.
type process struct {
	t    testing.TB
	rel  Release
	cmd  *exec.Cmd
	out  *tailBuffer
	addr chan string // the address it serves on, once it said so
	// metricsAddr is the address of its metrics listener, once it said so (before addr).
	metricsAddr chan string
	exited      chan struct{} // closed when it has exited (waitErr set)
	waitErr     error
	raced       bool // it reported a data race (set before exited is closed)
	once        sync.Once
}

func (p *process) start(env []string) {
	t := p.t
	t.Helper()
	r, w := io.Pipe()
	p.cmd = exec.Command(p.rel.Path, "serve")
	p.cmd.Env = append(append(os.Environ(), env...), "OTEL_SERVICE_NAME="+ServiceName(p.rel))
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s (%s): %v", p.rel.Name, p.rel.Path, err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		p.scan(r)
	}()
	go func() {
		err := p.cmd.Wait()
		_ = w.Close()
		<-scanned
		p.waitErr = err
		close(p.exited)
	}()
	t.Cleanup(p.stop)
}

// ServiceName is the OpenTelemetry service name of a process of rel (OTEL_SERVICE_NAME), so the
// spans of a mixed fleet say which release made them.
func ServiceName(rel Release) string { return "inkwell " + rel.Name }

// scan keeps the output, watches for a data race report and for the line naming the address.
func (p *process) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), processOutputMax)
	found := false
	for sc.Scan() {
		line := sc.Bytes()
		p.out.Write(append(line, '\n'))
		if strings.Contains(string(line), "WARNING: DATA RACE") {
			p.raced = true
		}
		if strings.Contains(string(line), `"msg":"serving metrics"`) {
			var l struct{ Addr string }
			if json.Unmarshal(line, &l) == nil && l.Addr != "" {
				select {
				case p.metricsAddr <- l.Addr:
				default:
				}
			}
		}
		if !found && strings.Contains(string(line), `"msg":"serving"`) {
			var l struct{ Addr string }
			if json.Unmarshal(line, &l) == nil && l.Addr != "" {
				found = true
				p.addr <- l.Addr
			}
		}
	}
	_, _ = io.Copy(io.Discard, r) // a line past the buffer: keep draining, the process must not block
}

// waitReady polls GET /readyz until it answers 200 (ready, or degraded when the test gave the
// instance an unreachable Redis).
func (p *process) waitReady(app *App) {
	t := p.t
	t.Helper()
	deadline := time.Now().Add(processStartWait)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		res, err := app.Fetch(nil, "GET", "/readyz", "", nil)
		if err == nil && res.Status == http.StatusOK {
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before it was ready (%v); its output:\n%s", p.rel.Name, p.waitErr, p.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within %v (last answer %d %s, %v); its output:\n%s", p.rel.Name, processStartWait, res.Status, res.Body, err, p.out)
		}
		time.Sleep(wait) // polling an external process's readiness: nothing to be told by
	}
}

// stop ends the process as an orchestrator would (SIGTERM, then SIGKILL after the shutdown
// timeout) and reports how it ended.
func (p *process) stop() {
	p.once.Do(func() {
		t := p.t
		select {
		case <-p.exited:
			t.Errorf("%s exited while the test ran (%v); its output:\n%s", p.rel.Name, p.waitErr, p.out)
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(processStopWait):
			_ = p.cmd.Process.Kill()
			<-p.exited
			t.Errorf("%s did not stop within %v of SIGTERM; killed. Its output:\n%s", p.rel.Name, processStopWait, p.out)
			return
		}
		switch {
		case p.raced:
			t.Errorf("%s reported a data race; its output:\n%s", p.rel.Name, p.out)
		case p.waitErr != nil:
			t.Errorf("%s did not exit cleanly after SIGTERM (%v); its output:\n%s", p.rel.Name, p.waitErr, p.out)
		case t.Failed():
			t.Logf("%s's output (the test failed):\n%s", p.rel.Name, p.out)
		}
	})
}

// processStopWait is how long a process may take to stop after SIGTERM (its shutdown timeout is
// 15 s by default).
const processStopWait = 30 * time.Second

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	lost int
}

func (b *tailBuffer) Write(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[over:]
		b.lost += over
	}
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost > 0 {
		return fmt.Sprintf("[... %d bytes before]\n%s", b.lost, b.buf)
	}
	return string(b.buf)
}

// RunCommand runs `inkwell ARGS...` of rel against db, as an operator runs a command of the
// release on its database (DATABASE_URL through a testenv.BudgetProxy, no pool settings), and
// returns what it printed; the test fails when the command fails.
func RunCommand(t testing.TB, rel Release, db *testenv.DB, args ...string) string {
	t.Helper()
	cmd := exec.Command(rel.Path, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+testenv.BudgetProxy(t, db.URL))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inkwell %s of %s: %v\n%s%s", strings.Join(args, " "), rel.Name, err, out, stderr.String())
	}
	return string(out)
}
