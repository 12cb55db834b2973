package ioc

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/inkwell-dev/inkwell/requestid"
)

func TestLogLinesCarryTheRequestID(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	ctx := requestid.With(context.Background(), "req-7")
	log.With("component", "x").InfoContext(ctx, "inside a request")
	log.Info("outside any request")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"request_id":"req-7"`) || strings.Contains(lines[1], "request_id") {
		t.Fatalf("log lines:\n%s", buf.String())
	}
}

// A line written inside a recording span names its trace and span (as JSON fields, beside the
// request id); one outside, or inside a span that is not recorded, does not.
func TestLogLinesCarryTheTraceInsideASpan(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(requestid.With(context.Background(), "req-8"), "request")
	log.InfoContext(ctx, "inside a span")
	span.End()
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	uctx, uspan := unsampled.Tracer("test").Start(context.Background(), "dropped")
	log.InfoContext(uctx, "inside a span nobody records")
	uspan.End()
	log.Info("outside any span")

	var lines []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	sc := span.SpanContext()
	if len(lines) != 3 || lines[0]["trace_id"] != sc.TraceID().String() || lines[0]["span_id"] != sc.SpanID().String() ||
		lines[0]["request_id"] != "req-8" {
		t.Fatalf("want the span's ids on the first line, got:\n%s", buf.String())
	}
	for _, l := range lines[1:] {
		if _, ok := l["trace_id"]; ok {
			t.Fatalf("trace id outside a recording span:\n%s", buf.String())
		}
	}
}

// TestLogDurationsAreStrings: a duration is written as Go writes it, never as raw nanoseconds,
// at the top level and inside groups and With attributes.
func TestLogDurationsAreStrings(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		log.With("lease", 30*time.Second).WithGroup("g").Info("x", "timeout", 15*time.Second, slog.Group("inner", "wait", 1500*time.Microsecond))
		out := buf.String()
		for _, want := range []string{"15s", "30s", "1.5ms"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q missing from %s", format, want, out)
			}
		}
		if strings.Contains(out, "15000000000") || strings.Contains(out, "1500000") {
			t.Errorf("%s: raw nanoseconds in %s", format, out)
		}
	}
}
