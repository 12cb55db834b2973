package cache

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
)

// TestBreakerLogSummarisesAnOutage: a two-minute outage probed twice a second logs the opening
// once, one summary per 30 s with the failed probes counted, and the closing — not two lines per
// probe.
func TestBreakerLogSummarisesAnOutage(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// Durations as the process logger writes them (ioc.NewLogger).
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			a.Value = slog.StringValue(a.Value.Duration().String())
		}
		return a
	}}
	l := &breakerLog{log: slog.New(slog.NewJSONHandler(&buf, opts)), now: func() time.Time { return now },
		every: 30 * time.Second, openFor: 500 * time.Millisecond}

	l.change(gobreaker.StateClosed, gobreaker.StateOpen)
	for range 240 { // 2 minutes of probes, each failing
		now = now.Add(500 * time.Millisecond)
		l.change(gobreaker.StateOpen, gobreaker.StateHalfOpen)
		l.change(gobreaker.StateHalfOpen, gobreaker.StateOpen)
	}
	now = now.Add(500 * time.Millisecond)
	l.change(gobreaker.StateOpen, gobreaker.StateHalfOpen)
	l.change(gobreaker.StateHalfOpen, gobreaker.StateClosed)

	var msgs []string
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		last = map[string]any{}
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		msgs = append(msgs, last["msg"].(string))
		if strings.Contains(line, "still open") && !strings.Contains(line, `"open_for":"`) {
			t.Errorf("summary without open_for: %s", line)
		}
	}
	// INFO level: the half-open lines (debug) are not written.
	if len(msgs) != 1+4+1 || !strings.Contains(msgs[0], "opened") || !strings.Contains(msgs[5], "closed") {
		t.Fatalf("%d lines, want opened, 4 summaries, closed:\n%s", len(msgs), buf.String())
	}
	for _, m := range msgs[1:5] {
		if !strings.Contains(m, "still open") {
			t.Fatalf("want summaries between opening and closing:\n%s", buf.String())
		}
	}
	if last["open_for"] != "2m0.5s" || last["probes_failed"] != float64(240) {
		t.Fatalf("closing line %v", last)
	}
	if !strings.Contains(buf.String(), `"probes_failed":60`) {
		t.Fatalf("first summary should count 60 failed probes:\n%s", buf.String())
	}

	// The next outage starts its own count.
	buf.Reset()
	l.change(gobreaker.StateClosed, gobreaker.StateOpen)
	now = now.Add(time.Second)
	l.change(gobreaker.StateOpen, gobreaker.StateHalfOpen)
	l.change(gobreaker.StateHalfOpen, gobreaker.StateClosed)
	if n := strings.Count(buf.String(), "\n"); n != 2 || !strings.Contains(buf.String(), `"probes_failed":0`) {
		t.Fatalf("second outage:\n%s", buf.String())
	}
}
