package inkwell

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

var discard = slog.New(slog.DiscardHandler)

// TestGracefulShutdownDrainsRequests proves that cancelling the app's context lets a request
// already being served finish with its full answer before Serve returns.
func TestGracefulShutdownDrainsRequests(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	app := &App{Server: &http.Server{Handler: handler}, Cron: cron.New(), Log: discard, ShutdownTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }()

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		res, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		got <- result{string(b), err}
	}()
	<-entered
	cancel()

	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) while a request was still running", err)
	default:
	}
	close(release)
	if r := <-got; r.err != nil || r.body != "finished" {
		t.Fatalf("in-flight request: %q, %v", r.body, r.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("still accepting connections after shutdown")
	}
}

// TestDurableTrimsTheOutboxStream: the outbox stream has a trimmer of its own, for the
// notifications group (events.Trimmer never cuts what a listed group still needs).
func TestDurableTrimsTheOutboxStream(t *testing.T) {
	cfg := &ioc.Config{Server: ioc.ServerConfig{ShutdownTimeout: time.Second}}
	durable := NewDurable(cfg, nil, nil, nil, "test:stream:outbox", nil, nil, service.CodeKeys{}, nil, nil, nil, nil, WebhookWorkers{}, time.Now, discard)
	var streams []string
	for _, w := range durable {
		if tr, ok := w.(*events.Trimmer); ok {
			streams = append(streams, tr.Stream())
		}
	}
	if len(streams) != 1 || streams[0] != "test:stream:outbox" {
		t.Fatalf("trimmers of the durable work: %v, want one of the outbox stream", streams)
	}
}

// drainingApp serves the real router's /readyz and /healthz, with a drain delay that ends when
// the test says: asked receives the delay Serve waits for, release ends it.
type drainingApp struct {
	*App
	url     string
	asked   chan time.Duration
	release chan time.Time
	served  chan error
	cancel  context.CancelFunc
}

func startDrainingApp(t *testing.T, tweak func(*App)) *drainingApp {
	t.Helper()
	drain := web.NewDrain()
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: 1 << 20}, discard, web.Handlers{Readiness: allReady{}, Drain: drain})
	d := &drainingApp{asked: make(chan time.Duration, 1), release: make(chan time.Time), served: make(chan error, 1)}
	d.App = &App{Server: &http.Server{Handler: router}, Cron: cron.New(), Log: discard, ShutdownTimeout: 10 * time.Second,
		Drain: drain, DrainDelay: time.Hour,
		after: func(delay time.Duration) <-chan time.Time { d.asked <- delay; return d.release }}
	if tweak != nil {
		tweak(d.App)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.url = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() { d.served <- d.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-d.release:
		default:
			close(d.release)
		}
		if err := <-d.served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return d
}

type allReady struct{}

func (allReady) Ready(context.Context) map[string]error { return map[string]error{"postgres": nil} }

// get sends a GET on a new connection and returns the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestShutdownDrainsReadinessBeforeRefusingConnections: on the signal (the context's end) /readyz
// answers 503 draining for the drain delay while the server still accepts and serves; only when
// the delay is over does it stop accepting.
func TestShutdownDrainsReadinessBeforeRefusingConnections(t *testing.T) {
	d := startDrainingApp(t, nil)
	if status, body := get(t, d.url+"/readyz"); status != http.StatusOK {
		t.Fatalf("readyz before the signal: %d %s", status, body)
	}
	d.cancel()
	select {
	case delay := <-d.asked:
		if delay != time.Hour {
			t.Fatalf("drain waits %s, want the configured hour", delay)
		}
	case err := <-d.served:
		d.served <- err
		t.Fatalf("Serve returned (%v) without a drain delay", err)
	}
	status, body := get(t, d.url+"/readyz")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"draining"`) {
		t.Fatalf("readyz while draining: %d %s, want 503 draining", status, body)
	}
	if status, _ := get(t, d.url+"/healthz"); status != http.StatusOK {
		t.Fatalf("healthz while draining: %d, want 200 (the process is alive and serving)", status)
	}
	select {
	case err := <-d.served:
		t.Fatalf("Serve returned (%v) before the drain delay was over", err)
	default:
	}
	d.release <- time.Now()
	if err := <-d.served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	d.served <- nil // for the cleanup
	if _, err := net.Dial("tcp", strings.TrimPrefix(d.url, "http://")); err == nil {
		t.Fatal("still accepting connections after the drain and shutdown")
	}
}

// TestSecondSignalCutsTheDrainShort: SkipDrain closed while the delay runs stops at once.
func TestSecondSignalCutsTheDrainShort(t *testing.T) {
	skip := make(chan struct{})
	d := startDrainingApp(t, func(a *App) { a.SkipDrain = skip })
	d.cancel()
	<-d.asked
	close(skip)
	if err := <-d.served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	d.served <- nil
}

// TestNoDrainDelayStopsAtOnce: with a zero delay the readiness never says draining and Serve does
// not wait for a timer.
func TestNoDrainDelayStopsAtOnce(t *testing.T) {
	d := startDrainingApp(t, func(a *App) { a.DrainDelay = 0 })
	d.cancel()
	if err := <-d.served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	d.served <- nil
	select {
	case delay := <-d.asked:
		t.Fatalf("waited a drain delay of %s", delay)
	default:
	}
	if d.Drain.Draining() {
		t.Fatal("drain started with a zero delay")
	}
}

// TestMetricsListener: the metrics are served on their own listener, not on the API's, through the
// drain (a scrape sees the instance leave), and the listener closes when Serve returns.
func TestMetricsListener(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up 1\n") })
	ms, closeMetrics, err := ioc.NewMetricsServer(&ioc.Config{Telemetry: ioc.TelemetryConfig{MetricsAddr: "127.0.0.1:0"}}, metrics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeMetrics)
	d := startDrainingApp(t, func(a *App) { a.Metrics = ms })
	murl := "http://" + ms.Addr() + "/metrics"
	if status, body := get(t, murl); status != http.StatusOK || body != "up 1\n" {
		t.Fatalf("metrics listener: %d %q", status, body)
	}
	if status, _ := get(t, d.url+"/metrics"); status != http.StatusNotFound {
		t.Fatalf("the API listener answers /metrics with %d, want 404", status)
	}
	d.cancel()
	<-d.asked
	if status, _ := get(t, murl); status != http.StatusOK {
		t.Fatalf("metrics while draining: %d", status)
	}
	d.release <- time.Now()
	if err := <-d.served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	d.served <- nil
	if _, err := net.Dial("tcp", ms.Addr()); err == nil {
		t.Fatal("the metrics listener still accepts after Serve returned")
	}
}

// TestMetricsListenerOff: an empty INKWELL_METRICS_ADDR opens no listener.
func TestMetricsListenerOff(t *testing.T) {
	ms, cleanup, err := ioc.NewMetricsServer(&ioc.Config{}, http.NotFoundHandler())
	if err != nil || ms != nil {
		t.Fatalf("NewMetricsServer with no address: %v, %v; want nil, nil", ms, err)
	}
	cleanup()
}
