package ioc

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
