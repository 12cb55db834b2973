package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestMain routes go-redis's own log lines (a process-wide logger) into redisLogs, so tests can
// show that a healthy path logs nothing.
func TestMain(m *testing.M) {
	redis.SetLogger(redisLogs)
	os.Exit(m.Run())
}

var redisLogs = &redisLogLines{}

type redisLogLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *redisLogLines) Printf(_ context.Context, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, v...))
}

// about returns the lines logged so far that contain s.
func (l *redisLogLines) about(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// blockingCommands records every blocking command a client sends, with its arguments.
type blockingCommands struct {
	mu   sync.Mutex
	sent [][]any
}

func (b *blockingCommands) DialHook(next redis.DialHook) redis.DialHook { return next }
func (b *blockingCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch strings.ToLower(cmd.Name()) {
		case "blpop", "brpop", "blmpop", "blmove", "xread":
			b.mu.Lock()
			b.sent = append(b.sent, append([]any(nil), cmd.Args()...))
			b.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}
func (b *blockingCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// waits returns the BLOCK argument (milliseconds) of every XREAD sent, and fails the test on any
// other blocking command.
func (b *blockingCommands) waits(t *testing.T) []int64 {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var ms []int64
	for _, args := range b.sent {
		if !strings.EqualFold(fmt.Sprint(args[0]), "xread") {
			t.Fatalf("blocking command %v: its timeout is in whole seconds", args[0])
		}
		for i := range args[:len(args)-1] {
			if strings.EqualFold(fmt.Sprint(args[i]), "block") {
				n, _ := strconv.ParseInt(fmt.Sprint(args[i+1]), 10, 64)
				ms = append(ms, n)
			}
		}
	}
	return ms
}

// TestAckedPublish_WaitsToTheMillisecondAndLogsNothing: an acknowledged invalidation that every
// instance answers returns true with a wait Redis keeps exactly (XREAD's BLOCK in milliseconds,
// never a timeout go-redis rounds up to a second), and go-redis logs nothing about it.
func TestAckedPublish_WaitsToTheMillisecondAndLogsNothing(t *testing.T) {
	t.Parallel()
	sent := &blockingCommands{}
	_, a, b := twoInstances(t, instanceOpts{hook: sent}, instanceOpts{})
	rounded := len(redisLogs.about("specified duration"))
	for range 5 {
		if !a.bcast.PublishAcked([]string{"some:key"}, 500*time.Millisecond) {
			t.Fatal("both instances are subscribed and healthy, yet not every acknowledgement came")
		}
		b.waitReceived(t, "some:key", false)
	}
	waits := sent.waits(t)
	if len(waits) == 0 {
		t.Fatal("no blocking wait for the acknowledgements was sent")
	}
	for _, ms := range waits {
		if ms <= 0 || ms > 500 {
			t.Fatalf("a wait of %d ms, want within the 500 ms given", ms)
		}
	}
	if lines := redisLogs.about("specified duration"); len(lines) > rounded {
		t.Fatalf("go-redis logged on a healthy path: %q", lines[rounded:])
	}
}

// TestAckedPublish_AnUnansweredInstanceCostsTheWaitGiven: a subscriber Redis counts but that never
// acknowledges makes the publisher wait what it was given, in Redis's blocking calls, and answer
// false.
func TestAckedPublish_AnUnansweredInstanceCostsTheWaitGiven(t *testing.T) {
	t.Parallel()
	sent := &blockingCommands{}
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	a := newInstance(t, ks, instanceOpts{hook: sent})
	a.waitState(t, true)
	mute := testenv.NewRedisClient(t, nil).Subscribe(context.Background(), a.bcast.Channel())
	t.Cleanup(func() { _ = mute.Close() })
	if _, err := mute.Receive(context.Background()); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	if a.bcast.PublishAcked([]string{"some:key"}, 150*time.Millisecond) {
		t.Fatal("true although one subscriber never acknowledged")
	}
	// Each wait is what is left of the 150 ms (the first ends early, at this instance's own
	// acknowledgement): never more, and the longest close to all of it.
	longest := int64(0)
	for _, ms := range sent.waits(t) {
		if ms > 150 {
			t.Fatalf("a wait of %d ms, beyond the 150 ms given", ms)
		}
		longest = max(longest, ms)
	}
	if longest < 100 {
		t.Fatalf("the longest wait was %d ms, want about the 150 ms given", longest)
	}
}

// TestAckedPublish_MixedVersions: during a rolling upgrade an instance of the older version
// acknowledges on the list the message names, and one of this version acknowledges an older
// publisher's message (a list only) there too.
func TestAckedPublish_MixedVersions(t *testing.T) {
	t.Parallel()
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	a := newInstance(t, ks, instanceOpts{})
	a.waitState(t, true)
	rdb := testenv.NewRedisClient(t, nil)

	// An older instance: it knows only the "ack" list.
	older := rdb.Subscribe(context.Background(), a.bcast.Channel())
	t.Cleanup(func() { _ = older.Close() })
	if _, err := older.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	go func() {
		for msg := range older.Channel() {
			var m struct {
				Ack string `json:"ack"`
			}
			if json.Unmarshal([]byte(msg.Payload), &m) == nil && m.Ack != "" {
				rdb.RPush(context.Background(), m.Ack, "older")
			}
		}
	}()
	if !a.bcast.PublishAcked([]string{"some:key"}, 300*time.Millisecond) {
		t.Fatal("the older instance's acknowledgement on the list was not counted")
	}

	_ = older.Close()

	// An older publisher: a message naming only a list, which this version's instance pushes onto.
	list := a.bcast.Channel() + ":ack:older-publisher"
	raw, _ := json.Marshal(map[string]any{"from": "older-publisher", "keys": []string{"other:key"}, "ack": list})
	if err := rdb.Publish(context.Background(), a.bcast.Channel(), raw).Err(); err != nil {
		t.Fatal(err)
	}
	a.waitReceived(t, "other:key", false)
	if got, err := rdb.LRange(context.Background(), list, 0, -1).Result(); err != nil || len(got) != 1 {
		t.Fatalf("list %s holds %v (%v), want this instance's acknowledgement", list, got, err)
	}
}
