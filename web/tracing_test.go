package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/inkwell-dev/inkwell/web"
)

const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
	// A sampled traceparent, as any client can send.
	clientTraceparent = "00-" + clientTraceID + "-" + clientSpanID + "-01"
	proxyIP           = "192.0.2.1"
)

// tracedRouter serves the router with tracing on a recorder, trusting proxyIP.
func tracedRouter(t *testing.T, sampler sdktrace.Sampler) (http.Handler, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes, Tracer: tp, TrustedProxies: []string{proxyIP, "10.0.0.0/8"}},
		slog.New(slog.DiscardHandler), web.Handlers{})
	return router, rec
}

func tracedRequest(router http.Handler, remote, traceparent string) {
	req := httptest.NewRequest(http.MethodGet, "/no/such/path", nil)
	req.RemoteAddr = remote + ":4000"
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	router.ServeHTTP(httptest.NewRecorder(), req)
}

// TestTraceContextOnlyFromTrustedProxies: a request straight from a trusted proxy continues the
// trace its traceparent names; anyone else's starts a trace of its own with the client's span
// as a link, so a client neither picks our trace ids nor forces its requests to be sampled.
func TestTraceContextOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	client := trace.NewSpanContext(trace.SpanContextConfig{TraceID: mustTraceID(t, clientTraceID), SpanID: mustSpanID(t, clientSpanID),
		TraceFlags: trace.FlagsSampled, Remote: true})

	t.Run("a trusted proxy's trace is continued", func(t *testing.T) {
		t.Parallel()
		for _, peer := range []string{proxyIP, "10.1.2.3"} {
			router, rec := tracedRouter(t, sdktrace.ParentBased(sdktrace.NeverSample()))
			tracedRequest(router, peer, clientTraceparent)
			spans := rec.Ended()
			if len(spans) != 1 || spans[0].SpanContext().TraceID() != client.TraceID() || spans[0].Parent().SpanID() != client.SpanID() {
				t.Fatalf("from %s: %d spans; want one child of the proxy's span (sampled as the proxy said)", peer, len(spans))
			}
		}
	})
	t.Run("an untrusted client's trace is a link of a new trace", func(t *testing.T) {
		t.Parallel()
		router, rec := tracedRouter(t, sdktrace.AlwaysSample())
		tracedRequest(router, "198.51.100.7", clientTraceparent)
		spans := rec.Ended()
		if len(spans) != 1 {
			t.Fatalf("%d spans, want 1", len(spans))
		}
		s := spans[0]
		if s.SpanContext().TraceID() == client.TraceID() || s.Parent().IsValid() {
			t.Fatalf("span in trace %s with parent %v: the client chose our trace", s.SpanContext().TraceID(), s.Parent())
		}
		if links := s.Links(); len(links) != 1 || !links[0].SpanContext.Equal(client) {
			t.Fatalf("links %+v, want the client's span", links)
		}
	})
	t.Run("an untrusted client cannot force sampling", func(t *testing.T) {
		t.Parallel()
		router, rec := tracedRouter(t, sdktrace.ParentBased(sdktrace.NeverSample()))
		tracedRequest(router, "198.51.100.7", clientTraceparent)
		if n := len(rec.Ended()); n != 0 {
			t.Fatalf("%d spans recorded: a client's sampled flag decided for the sampler", n)
		}
	})
	t.Run("no or a malformed traceparent: a new trace without links", func(t *testing.T) {
		t.Parallel()
		router, rec := tracedRouter(t, sdktrace.AlwaysSample())
		tracedRequest(router, "198.51.100.7", "")
		tracedRequest(router, "198.51.100.7", "00-not-a-trace-01")
		for _, s := range rec.Ended() {
			if s.Parent().IsValid() || len(s.Links()) != 0 {
				t.Fatalf("span %q: parent %v, links %v", s.Name(), s.Parent(), s.Links())
			}
		}
		if n := len(rec.Ended()); n != 2 {
			t.Fatalf("%d spans, want 2", n)
		}
	})
}

func mustTraceID(t *testing.T, s string) trace.TraceID {
	t.Helper()
	id, err := trace.TraceIDFromHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustSpanID(t *testing.T, s string) trace.SpanID {
	t.Helper()
	id, err := trace.SpanIDFromHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
