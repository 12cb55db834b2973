package ioc

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/requestid"
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
