package cache_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// During a rolling upgrade the invalidation channel carries messages (and acknowledgement lists
// get acknowledgements) from two releases: each instance applies both, and what this release
// sends is still what the previous one reads (docs/OPERATIONS.md, "Upgrading a fleet").

// previousRelease is an instance of v0.1.0 (2cc64c0) as far as the channel can tell: it decodes
// messages into the fields it knew and acknowledges with its bare instance id.
type previousRelease struct {
	id       string
	messages chan map[string]any // every message it received, as JSON fields
}

// startPreviousRelease subscribes a v0.1.0-like receiver to channel; ack, when set, replaces its
// acknowledgement.
func startPreviousRelease(t *testing.T, channel, ack string) *previousRelease {
	t.Helper()
	rdb := testenv.NewRedisClient(t, nil)
	ps := rdb.Subscribe(context.Background(), channel)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(context.Background()); err != nil { // the confirmation: subscribed from here
		t.Fatal(err)
	}
	p := &previousRelease{id: "00112233aabbccdd", messages: make(chan map[string]any, 16)}
	if ack == "" {
		ack = p.id
	}
	go func() {
		for msg := range ps.Channel() {
			var fields map[string]any
			_ = json.Unmarshal([]byte(msg.Payload), &fields)
			// v0.1.0's invalidation struct: from, keys, ack; anything else it ignores.
			var m struct {
				From string   `json:"from"`
				Keys []string `json:"keys"`
				Ack  string   `json:"ack,omitempty"`
			}
			if json.Unmarshal([]byte(msg.Payload), &m) == nil && m.Ack != "" {
				_ = rdb.RPush(context.Background(), m.Ack, ack).Err()
			}
			select {
			case p.messages <- fields:
			default: // a test that does not look at them
			}
		}
	}()
	return p
}

func TestBroadcast_MessagesCarryTheirVersion(t *testing.T) {
	t.Parallel()
	ks, a, _ := twoInstances(t, instanceOpts{}, instanceOpts{})
	old := startPreviousRelease(t, a.bcast.Channel(), "")
	key := ks.Key("article", "9")
	if err := a.rt.Delete(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	m := testenv.Recv(t, old.messages, "A's invalidation")
	if m["v"] != float64(1) || m["from"] == "" || !strings.Contains(strings.Join(toStrings(m["keys"]), ","), key) {
		t.Fatalf("message %v: want v 1, from and the key", m)
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}

func TestBroadcast_ReadsThisAndThePreviousVersion(t *testing.T) {
	t.Parallel()
	ks, _, b := twoInstances(t, instanceOpts{}, instanceOpts{})
	sender := testenv.NewRedisClient(t, nil)
	key := ks.Key("article", "1")
	l := &loader{val: article{ID: 1, Title: "v1"}}
	messages := map[string]string{
		// What v0.1.0 (2cc64c0) publishes: no "v".
		"version 0 (v0.1.0)": `{"from":"00112233aabbccdd","keys":["` + key + `"]}`,
		"version 1":          `{"v":1,"from":"00112233aabbccdd","keys":["` + key + `"]}`,
		// A later release keeps these fields and may add others.
		"a later version": `{"v":2,"from":"00112233aabbccdd","keys":["` + key + `"],"reason":"edit"}`,
	}
	for name, payload := range messages {
		b.get(t, key, l)
		hits := b.localHits()
		b.get(t, key, l)
		if b.localHits() != hits+1 {
			t.Fatalf("%s: B's copy is not in its tier before the message", name)
		}
		if err := sender.Publish(context.Background(), b.bcast.Channel(), payload).Err(); err != nil {
			t.Fatal(err)
		}
		b.waitReceived(t, key, false)
		b.get(t, key, l) // from Redis: the message dropped the copy in B's tier
		if b.localHits() != hits+1 {
			t.Fatalf("%s: B still served its copy after the message dropped it", name)
		}
	}
	if n := b.bcast.Stats.UnreadableMsgs.Load(); n != 0 {
		t.Fatalf("%d messages unreadable, want 0", n)
	}

	// A version this release cannot vouch for is unreadable: every tier is emptied.
	if err := sender.Publish(context.Background(), b.bcast.Channel(), `{"v":-1,"from":"x","keys":["other"]}`).Err(); err != nil {
		t.Fatal(err)
	}
	for testenv.Recv(t, b.received, "the unreadable message").keys != nil {
	}
	if n := b.bcast.Stats.UnreadableMsgs.Load(); n != 1 {
		t.Fatalf("%d messages unreadable, want 1", n)
	}
}

func TestBroadcast_AcknowledgementsOfThisAndThePreviousVersion(t *testing.T) {
	t.Parallel()
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	a := newInstance(t, ks, instanceOpts{})
	a.waitState(t, true)

	t.Run("this release acknowledges with its version", func(t *testing.T) {
		stream := ks.Key("acktest", testenv.RandomID(6))
		a.bcast.AcknowledgeOn(stream)
		entries, err := testenv.NewRedisClient(t, nil).XRange(context.Background(), stream, "-", "+").Result()
		if err != nil || len(entries) != 1 {
			t.Fatalf("stream %v, %v: want one acknowledgement", entries, err)
		}
		if v := entries[0].Values; v["v"] != "1" || v["from"] == "" {
			t.Fatalf("acknowledgement %v: want v 1 and from", v)
		}
	})

	t.Run("a previous release's acknowledgement counts", func(t *testing.T) {
		old := startPreviousRelease(t, a.bcast.Channel(), "")
		// Two receivers: A's own subscription (acknowledging at version 1) and the old instance
		// (its bare id).
		if !a.bcast.PublishAcked([]string{ks.Key("article", "2")}, 10*time.Second) {
			t.Fatal("PublishAcked = false with every receiver acknowledging")
		}
		if m := testenv.Recv(t, old.messages, "the acknowledged message"); m["ack"] == "" || m["v"] != float64(1) {
			t.Fatalf("the old instance received %v: want an ack list and v 1", m)
		}
	})

	t.Run("an unreadable acknowledgement does not count", func(t *testing.T) {
		startStreamAcker(t, a.bcast.Channel(), map[string]any{"v": "-1", "from": "someone"})
		// The wait is what an instance that never answers costs: the publisher gives up after it.
		if a.bcast.PublishAcked([]string{ks.Key("article", "3")}, 300*time.Millisecond) {
			t.Fatal("PublishAcked = true though one acknowledgement was unreadable")
		}
	})
}

// startStreamAcker subscribes to channel as an instance of this release would, and acknowledges
// every acknowledged message with fields on the stream it names.
func startStreamAcker(t *testing.T, channel string, fields map[string]any) {
	t.Helper()
	rdb := testenv.NewRedisClient(t, nil)
	ps := rdb.Subscribe(context.Background(), channel)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(context.Background()); err != nil { // the confirmation: subscribed from here
		t.Fatal(err)
	}
	go func() {
		for msg := range ps.Channel() {
			var m struct {
				AckStream string `json:"ack_stream"`
			}
			if json.Unmarshal([]byte(msg.Payload), &m) == nil && m.AckStream != "" {
				_ = rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: m.AckStream, Values: fields}).Err()
			}
		}
	}()
}
