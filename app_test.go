package inkwell

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/service"
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
	cfg := &ioc.Config{StreamMaxLen: 100, StreamTrimEvery: time.Second, QueueConcurrency: 1, QueueLease: time.Second,
		QueuePoll: time.Second, QueueReapEvery: time.Second, OutboxPoll: time.Second, ShutdownTimeout: time.Second}
	durable := NewDurable(cfg, nil, nil, nil, "test:stream:outbox", nil, nil, service.CodeKeys{}, nil, time.Now, discard)
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
