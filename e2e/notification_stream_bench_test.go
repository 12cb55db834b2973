package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestNotificationStreamBench measures live notification streams on one instance, a process of
// the working tree's binary (so its RSS is the server's alone): the resident memory of N idle
// streams (BENCH_SSE_STREAMS, default 10,000: 5 per user, the per-user cap), and the
// publish-to-receive latency at 1,000 streams (one per user): a notification written to
// PostgreSQL and announced on Redis as a commit announces it, until the client has read its
// event. make bench-sse runs it (without -race); the figures go to docs/BENCHMARKS.md by hand.
func TestNotificationStreamBench(t *testing.T) {
	if os.Getenv("INKWELL_BENCH_SSE") != "1" {
		t.Skip("a real-time measurement: INKWELL_BENCH_SSE=1 (make bench-sse) runs it")
	}
	streams := 10000
	if v, err := strconv.Atoi(os.Getenv("BENCH_SSE_STREAMS")); err == nil && v > 0 {
		streams = v
	}
	const perUser, latencyStreams = 5, 1000
	rounds := 20
	if v, err := strconv.Atoi(os.Getenv("BENCH_SSE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	users := max((streams+perUser-1)/perUser, latencyStreams)
	db, r := testenv.NewDB(t), testenv.NewRedis(t)
	// The instance's stream cap is half its open-file limit, inherited from this process: raise
	// the soft limit to the hard one, and say so when even that cannot hold the streams.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if uint64(streams) > lim.Cur/2 {
		t.Fatalf("%d streams need an open-file limit of at least %d (ulimit -n is %d): raise it or set BENCH_SSE_STREAMS", streams, 2*streams, lim.Cur)
	}
	app := &testApp{apptest.StartProcess(t, apptest.CurrentRelease(t), db, r.Prefix, noAuthLimit, func(c *ioc.Config) {
		c.Server.RateWrites = "0"
		c.Telemetry.PprofAddr = os.Getenv("BENCH_PPROF_ADDR") // to profile the instance under the rounds
	})}

	// Users, registered through the API (a few at a time: each hashes a password).
	start := time.Now()
	tokens := make([]string, users)
	var wg sync.WaitGroup
	var failed atomic.Int64
	next := atomic.Int64{}
	for range 2 * runtime.NumCPU() {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < users; i = int(next.Add(1) - 1) {
				name := "sse" + strconv.Itoa(i)
				res, err := app.Fetch(nil, "POST", "/api/users", "", map[string]any{"user": map[string]any{
					"username": name, "email": name + "@example.com", "password": "correct horse battery"}})
				if err != nil || res.Status != http.StatusCreated {
					failed.Add(1)
					continue
				}
				var body struct {
					User struct {
						Token string `json:"token"`
					} `json:"user"`
				}
				if json.Unmarshal(res.Body, &body) != nil || body.User.Token == "" {
					failed.Add(1)
					continue
				}
				tokens[i] = body.User.Token
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d registrations failed", failed.Load())
	}
	t.Logf("%d users registered in %s", users, time.Since(start).Round(time.Millisecond))
	rss0 := residentBytes(t, app)

	// N idle streams.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type held struct {
		user int
		got  chan time.Time // one receive time per notification event
	}
	// Each client is a bare HTTP/1.1 connection read line by line in place (no http.Transport, no
	// chunked decoder, no string per line): the clients share the machine with the instance, so
	// the cheaper each read, the less the client's own CPU is in the measured latency. An event's
	// "id:" line starts a line whatever the chunk framing around it (a flush is one chunk).
	addr := strings.TrimPrefix(app.URL, "http://")
	var dialer net.Dialer
	open := func(user int) (*held, error) {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		fail := func(err error) (*held, error) {
			stop()
			_ = conn.Close()
			return nil, err
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.WriteString(conn, "GET /api/user/notifications/stream HTTP/1.1\r\nHost: "+addr+
			"\r\nAuthorization: Token "+tokens[user]+"\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
			return fail(err)
		}
		br := bufio.NewReaderSize(conn, 4096)
		status, err := br.ReadString('\n')
		if err != nil {
			return fail(err)
		}
		if !strings.HasPrefix(status, "HTTP/1.1 200 ") {
			return fail(fmt.Errorf("status %q", strings.TrimSpace(status)))
		}
		for { // the headers, then the body's first lines until the retry hint
			line, err := br.ReadSlice('\n')
			if err != nil {
				return fail(fmt.Errorf("before the retry line: %w", err))
			}
			if bytes.HasPrefix(line, []byte("retry:")) {
				break
			}
		}
		_ = conn.SetDeadline(time.Time{})
		h := &held{user: user, got: make(chan time.Time, rounds+1)}
		go func() {
			defer func() { stop(); _ = conn.Close() }()
			for {
				line, err := br.ReadSlice('\n')
				if errors.Is(err, bufio.ErrBufferFull) {
					continue // a long data line: its rest follows
				}
				if err != nil {
					return
				}
				if bytes.HasPrefix(line, []byte("id:")) {
					h.got <- time.Now()
				}
			}
		}()
		return h, nil
	}
	openMany := func(n int, userOf func(i int) int) []*held {
		out := make([]*held, n)
		var wg sync.WaitGroup
		var errs atomic.Int64
		next := atomic.Int64{}
		for range 64 {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
					h, err := open(userOf(i))
					if err != nil {
						if errs.Add(1) == 1 {
							t.Logf("open stream %d: %v", i, err)
						}
						continue
					}
					out[i] = h
				}
			})
		}
		wg.Wait()
		if errs.Load() > 0 {
			t.Fatalf("%d of %d streams failed to open", errs.Load(), n)
		}
		return out
	}
	start = time.Now()
	idle := openMany(streams, func(i int) int { return i / perUser })
	t.Logf("%d streams opened in %s", len(idle), time.Since(start).Round(time.Millisecond))
	rss1 := residentBytes(t, app)
	t.Logf("RSS: %.1f MiB before, %.1f MiB with %d idle streams: %.1f KiB per stream",
		float64(rss0)/(1<<20), float64(rss1)/(1<<20), streams, float64(rss1-rss0)/1024/float64(streams))
	cancel() // the idle streams end; the latency streams get a context of their own
	closing := time.Now()
	for tick := time.NewTicker(100 * time.Millisecond); streamSlots(t, r) > 0; <-tick.C {
		if time.Since(closing) > 2*time.Minute {
			t.Fatalf("%d stream slots still held 2 minutes after the clients left", streamSlots(t, r))
		}
	}
	t.Logf("%d streams closed (their slots freed) in %s", streams, time.Since(closing).Round(time.Millisecond))

	// Publish-to-receive at 1,000 streams, one per user.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	live := openMany(latencyStreams, func(i int) int { return i })
	ids := userIDs(t, db, latencyStreams)
	hub, stop := cache.NewNotificationHub(r.Client, cache.Keyspace(r.Prefix), nil, nil, nil)
	defer stop()
	testenv.WaitUntil(t, "the bench's hub subscribed", hub.Subscribed)
	var lat []time.Duration
	var inRounds time.Duration // wall time from each publish until its round's last event
	serverCPU0, benchCPU0 := processCPUSeconds(t, app), selfCPUSeconds()
	for round := range rounds {
		// Written as a follower fan-out writes them, and announced as its commit announces them:
		// with the notifications, rendered.
		rows, err := db.Pool.Query(context.Background(), `INSERT INTO notifications (user_id, kind, event_id, detail)
			SELECT u, 'report.resolved', 'bench-' || $2::text, 'bench' FROM unnest($1::bigint[]) u
			RETURNING id, user_id, created_at`, ids, strconv.Itoa(round))
		if err != nil {
			t.Fatal(err)
		}
		var items []domain.UserNotification
		for rows.Next() {
			it := domain.UserNotification{Notification: domain.Notification{Kind: "report.resolved", Detail: "bench"}}
			if err := rows.Scan(&it.ID, &it.UserID, &it.CreatedAt); err != nil {
				t.Fatal(err)
			}
			items = append(items, it)
		}
		if rows.Err() != nil || len(items) != len(ids) {
			t.Fatalf("round %d: %d notifications written, %v", round, len(items), rows.Err())
		}
		t0 := time.Now()
		hub.NotifiedWith(context.Background(), items)
		for _, h := range live {
			select {
			case at := <-h.got:
				lat = append(lat, at.Sub(t0))
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: stream of user %d got nothing in 10 s", round, h.user)
			}
		}
		inRounds += time.Since(t0)
	}
	// Where the rounds' CPU went: the instance's, and this process's (the 1,000 clients, the
	// publishing hub, the rounds' INSERTs, and the budget proxy its PostgreSQL connections pass
	// through), against the rounds' wall time (from each publish to its round's last event).
	serverCPU, benchCPU := processCPUSeconds(t, app)-serverCPU0, selfCPUSeconds()-benchCPU0
	t.Logf("CPU over the %d rounds: instance %.2f s, bench process %.2f s (clients, hub, inserts, proxy), %.0f and %.0f µs per event; the rounds took %s from publish to last event, of %d cores",
		rounds, serverCPU, benchCPU, serverCPU*1e6/float64(len(lat)), benchCPU*1e6/float64(len(lat)), inRounds.Round(time.Millisecond), runtime.NumCPU())
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))].Round(10 * time.Microsecond) }
	t.Logf("publish-to-receive at %d streams, %d rounds (%d events): p50 %s, p90 %s, p99 %s, max %s",
		latencyStreams, rounds, len(lat), q(0.5), q(0.9), q(0.99), lat[len(lat)-1].Round(10*time.Microsecond))
	if q(0.99) > 50*time.Millisecond {
		t.Logf("p99 above the 50 ms goal")
	}
}

var residentRE = regexp.MustCompile(`(?m)^process_resident_memory_bytes ([0-9.e+]+)$`)

// residentBytes reads the instance's RSS from its metrics (after a short settle).
func residentBytes(t *testing.T, app *testApp) int64 {
	t.Helper()
	m := residentRE.FindStringSubmatch(app.Metrics())
	if m == nil {
		t.Fatal("no process_resident_memory_bytes in the metrics")
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return int64(f)
}

var cpuRE = regexp.MustCompile(`(?m)^process_cpu_seconds_total ([0-9.e+]+)$`)

// processCPUSeconds reads the instance's CPU time (user and system) from its metrics.
func processCPUSeconds(t *testing.T, app *testApp) float64 {
	t.Helper()
	m := cpuRE.FindStringSubmatch(app.Metrics())
	if m == nil {
		t.Fatal("no process_cpu_seconds_total in the metrics")
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// selfCPUSeconds is this process's CPU time (user and system).
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// streamSlots counts the per-user stream slots held in Redis.
func streamSlots(t *testing.T, r *testenv.Redis) int64 {
	t.Helper()
	keys, err := r.Client.Keys(context.Background(), cache.Keyspace(r.Prefix).Key("streams", "*")).Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, k := range keys {
		n += r.Client.ZCard(context.Background(), k).Val()
	}
	return n
}

// userIDs are the ids of users sse0..sse(n-1), in that order.
func userIDs(t *testing.T, db *testenv.DB, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		if err := db.Pool.QueryRow(context.Background(), `SELECT id FROM users WHERE username = $1`, "sse"+strconv.Itoa(i)).Scan(&ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}
