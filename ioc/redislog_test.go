package ioc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisLogsGoThroughSlog: go-redis's lines about a Redis that is down come out as JSON log
// lines, not as go-redis's plain text on stderr.
func TestRedisLogsGoThroughSlog(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "debug", "json")
	if err != nil {
		t.Fatal(err)
	}
	RouteRedisLogs(log)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Fatal("a ping to port 1 succeeded")
	}
	redisLog{log.With("component", "go-redis")}.Printf(context.Background(), "redis: %s", "something else")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want the dial failure and the other line, got:\n%s", buf.String())
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["component"] != "go-redis" || strings.HasPrefix(rec["msg"].(string), "redis: ") {
			t.Fatalf("line %q (%v)", l, err)
		}
	}
	if !strings.Contains(lines[0], `"level":"DEBUG"`) || !strings.Contains(lines[0], "failed to dial") || !strings.Contains(lines[len(lines)-1], `"level":"WARN"`) {
		t.Fatalf("levels:\n%s", buf.String())
	}
}
