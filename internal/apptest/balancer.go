package apptest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// StartFleet serves n instances on one database and one Redis key prefix behind a round-robin
// HAProxy, as production runs a fleet: the App's URL is the balancer's, so consecutive requests
// land on different instances. Cfg and Wired are the first instance's (driving a job such as
// Wired.Rank.RunOnce on one instance is what that instance's schedule would do); Fleet lists all
// of them, in the balancer's order.
func StartFleet(t testing.TB, n int, tweak ...func(*ioc.Config)) *App {
	t.Helper()
	db, prefix := testenv.NewDB(t), testenv.NewRedis(t).Prefix
	smallPools := func(c *ioc.Config) {
		c.Database.URL = fleetDatabaseURL(db.URL)
		c.Tune.QueuePoll, c.Tune.OutboxPoll = new(fleetPoll), new(fleetPoll)
	}
	tweak = append([]func(*ioc.Config){smallPools}, tweak...)
	instances := make([]*App, n)
	addrs := make([]string, n)
	for i := range instances {
		instances[i] = StartReplica(t, db, prefix, tweak...)
		addrs[i] = strings.TrimPrefix(instances[i].URL, "http://")
	}
	first := *instances[0]
	first.URL = StartBalancer(t, addrs)
	first.HTTP = &http.Client{}
	first.Fleet = instances
	return &first
}

// A fleet's instances hold PostgreSQL connections that a test's load does not need: a parent
// test's fleet lives while its parallel subtests run, and with five such parents in e2e, fleets
// of three that each kept two LISTEN connections, the job and outbox pollers' connections (used
// every second, so never idle long) and what their busiest moment had opened held ~90 connections
// at once. So a fleet instance's pools are capped at FleetPoolMaxConns (AppPoolMaxConns is one
// instance's; the test's load is split between the instances), close a connection idle for
// fleetIdleConns, and its pollers look every fleetPoll rather than every second: LISTEN/NOTIFY
// wakes them when there is work, on every instance.
const (
	FleetPoolMaxConns = 4
	fleetIdleConns    = "500ms"
	fleetPoll         = 3 * time.Second
)

// fleetDatabaseURL is dbURL with a fleet instance's pool settings.
func fleetDatabaseURL(dbURL string) string {
	u, err := url.Parse(withPoolMaxConns(dbURL, FleetPoolMaxConns))
	if err != nil {
		return dbURL // the app reports the bad URL
	}
	q := u.Query()
	q.Set("pool_max_conn_idle_time", fleetIdleConns)
	q.Set("pool_health_check_period", fleetIdleConns)
	u.RawQuery = q.Encode()
	return u.String()
}

// ServedByHeader names the response header in which the balancer says which instance answered
// ("app1", "app2", ...: the position in StartBalancer's list, from 1).
const ServedByHeader = "X-Served-By"

// StartBalancer runs HAProxy from the OS packages (scripts/services.sh haproxy installs it) in
// front of the addresses (host:port), balancing every request round robin, until the test ends;
// it returns the balancer's base URL. Its listening socket is opened here and handed to HAProxy
// (bind fd@3), so the port is never free for another process to take in between and requests
// sent before HAProxy has started wait in the socket's backlog instead of being refused.
func StartBalancer(t testing.TB, addrs []string) string {
	t.Helper()
	bin := haproxyBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sock, err := ln.(*net.TCPListener).File() // a duplicate: HAProxy's fd 3
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil { // the duplicate keeps the socket listening
		t.Fatal(err)
	}
	defer sock.Close() // once HAProxy has its copy: if HAProxy dies, clients are refused, not left hanging

	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(haproxyConfig(addrs)), 0o600); err != nil {
		t.Fatal(err)
	}
	check := exec.Command(bin, "-c", "-f", cfg)
	check.ExtraFiles = []*os.File{sock}
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("haproxy rejects its test configuration: %v\n%s", err, out)
	}
	out := &lockedBuffer{}
	cmd := exec.Command(bin, "-db", "-f", cfg) // -db: in the foreground, one process
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{sock}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	exited := make(chan struct{})
	var waitErr error // written before exited is closed
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
			t.Errorf("haproxy exited while the test ran (%v); its output:\n%s", waitErr, out)
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM) // hard stop: the instances are stopped after it
		select {
		case <-exited: // "signal: terminated", as asked
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() && out.Len() > 0 {
			t.Logf("haproxy's output:\n%s", out)
		}
	})
	return base
}

// haproxyConfig balances between addrs as scripts/fleet.sh's configuration does, without its
// health checks (the test starts the instances before the balancer and stops them after it) and
// its request log (the X-Served-By header says who answered).
func haproxyConfig(addrs []string) string {
	var b strings.Builder
	b.WriteString(`global
    maxconn 8192

defaults
    mode http
    option forwardfor
    retries 2
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s

frontend fleet
    bind fd@3
    default_backend instances

backend instances
    balance roundrobin
    http-response set-header ` + ServedByHeader + ` %s
`)
	for i, a := range addrs {
		fmt.Fprintf(&b, "    server app%d %s\n", i+1, a)
	}
	return b.String()
}

// haproxyBinary is the haproxy on PATH, else Debian's /usr/sbin/haproxy (not on a non-root PATH).
func haproxyBinary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	const debian = "/usr/sbin/haproxy"
	if _, err := os.Stat(debian); err == nil {
		return debian
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("haproxy: %v", err)
	}
	t.Fatal("haproxy is not installed: the fleet tests need it (scripts/services.sh haproxy installs it; make test-fleet runs that)")
	return ""
}

// lockedBuffer collects a process's output while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// StartMixedFleet is StartFleet with processes (StartProcess): one instance of each release, in
// the order given, on one database and one Redis key prefix behind a round-robin HAProxy, so
// consecutive requests alternate between the releases, as during a rolling upgrade. The database
// is a copy of the tests' template, migrated by this tree's migrations, which is what the newest
// release (the last) applies before it serves: it starts first, with INKWELL_MIGRATE_ON_START as
// a new binary would, and finds nothing left to do. Cfg is the first instance's; Fleet lists all.
func StartMixedFleet(t testing.TB, releases []Release, tweak ...func(*ioc.Config)) *App {
	t.Helper()
	db, prefix := testenv.NewDB(t), testenv.NewRedis(t).Prefix
	instances := make([]*App, len(releases))
	addrs := make([]string, len(releases))
	migrate := func(c *ioc.Config) { c.Server.MigrateOnStart = true }
	for i := len(releases) - 1; i >= 0; i-- { // the newest first: it migrates before the others serve
		tw := tweak
		if i == len(releases)-1 {
			tw = append([]func(*ioc.Config){migrate}, tweak...)
		}
		instances[i] = StartProcess(t, releases[i], db, prefix, tw...)
		addrs[i] = strings.TrimPrefix(instances[i].URL, "http://")
	}
	// Stopped together, after the balancer (registered later, so it runs first): each takes
	// about a second to drain.
	t.Cleanup(func() {
		var stopping sync.WaitGroup
		for _, in := range instances {
			stopping.Go(in.stop)
		}
		stopping.Wait()
	})
	first := *instances[0]
	first.URL = StartBalancer(t, addrs)
	first.HTTP = &http.Client{}
	first.Fleet = instances
	first.Release = Release{}
	return &first
}
