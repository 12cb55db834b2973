package ioc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/inkwell-dev/inkwell/requestid"
)

// NewLogger returns the process logger writing to w in the configured level and format.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: durationsAsStrings}
	switch format {
	case "json":
		return slog.New(requestIDHandler{slog.NewJSONHandler(w, opts)}), nil
	case "text":
		return slog.New(requestIDHandler{slog.NewTextHandler(w, opts)}), nil
	default:
		return nil, fmt.Errorf("log format %q: want json or text", format)
	}
}

// durationsAsStrings writes a time.Duration as its Go string ("15s", "1.5ms"): the JSON handler
// would write it as integer nanoseconds ("timeout":15000000000), which no reader takes for a time.
// Attributes named *_ms carry milliseconds as numbers already and are not durations.
func durationsAsStrings(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// requestIDHandler adds the request id of the record's context to every line, so all the lines
// one request causes can be found together, and, inside a recording span, the trace and span
// ids, so a line leads to its trace (and a trace to its lines).
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := requestid.From(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		sc := span.SpanContext()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
