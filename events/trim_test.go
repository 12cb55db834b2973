package events_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

var trimGroups = []string{"count", "history"}

func (e *env) trimmer(maxLen int64) *events.Trimmer {
	return events.NewTrimmer(e.rdb, e.stream, trimGroups, maxLen, 10*time.Millisecond, e.log)
}

// addIDs writes a valid event under each of the given entry ids.
func (e *env) addIDs(t *testing.T, ids []string) {
	t.Helper()
	evs := newEvents(len(ids), eventOpts{})
	for start := 0; start < len(ids); start += 1000 {
		_, err := e.rdb.Pipelined(t.Context(), func(p redis.Pipeliner) error {
			for i := start; i < min(start+1000, len(ids)); i++ {
				p.XAdd(t.Context(), &redis.XAddArgs{Stream: e.stream, ID: ids[i], Values: values(evs[i])})
			}
			return nil
		})
		if err != nil {
			t.Fatalf("XADD: %v", err)
		}
	}
}

// trimOnce trims and returns the stream's length afterwards.
func (e *env) trimOnce(t *testing.T, tr *events.Trimmer) int64 {
	t.Helper()
	if _, err := tr.TrimOnce(t.Context()); err != nil {
		t.Fatalf("TrimOnce: %v", err)
	}
	return e.xlen(t)
}

// consumeAll has group read every entry and acknowledge the first acked of them.
func (e *env) consumeAll(t *testing.T, group string, acked int) []string {
	t.Helper()
	var ids []string
	for {
		got := e.readAs(t, group, "c", 1000)
		if len(got) == 0 {
			break
		}
		ids = append(ids, got...)
	}
	e.ack(t, group, ids[:acked])
	return ids
}

// checkKept fails unless every entry from ids[from] on is still in the stream.
func (e *env) checkKept(t *testing.T, ids []string, from int) {
	t.Helper()
	msgs, err := e.rdb.XRange(t.Context(), e.stream, ids[from], "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(msgs))
	for i, m := range msgs {
		got[i] = m.ID
	}
	if !slices.Equal(got, ids[from:]) {
		t.Fatalf("XRANGE %s + holds %d entries, want all %d from the oldest still needed on", ids[from], len(got), len(ids)-from)
	}
}

func TestTrimmer(t *testing.T) {
	t.Parallel()

	t.Run("all acknowledged: trimmed to about MaxLen", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.createGroup(t, "count")
		e.createGroup(t, "history")
		ids := e.add(t, 1000)
		e.consumeAll(t, "count", 1000)
		e.consumeAll(t, "history", 1000)
		n := e.trimOnce(t, e.trimmer(100))
		t.Logf("1,000 entries, MaxLen 100: %d left", n)
		if n < 100 || n > 300 {
			t.Fatalf("XLEN after trimming = %d, want about 100 (at least 100, well under 1,000)", n)
		}
		e.checkKept(t, ids, 900) // the newest 100 always stay
	})

	t.Run("a large excess is trimmed in one pass", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.createGroup(t, "count")
		e.createGroup(t, "history")
		// 25,000 entries, ten per millisecond: more than XTRIM's default cap of 10,000 per call.
		ids := make([]string, 25_000)
		for i := range ids {
			ids[i] = fmt.Sprintf("%d-%d", 1_000_000+i/10, i%10)
		}
		e.addIDs(t, ids)
		e.consumeAll(t, "count", len(ids))
		e.consumeAll(t, "history", len(ids))
		n := e.trimOnce(t, e.trimmer(1000))
		t.Logf("25,000 entries, MaxLen 1,000: %d left after one pass", n)
		if n < 1000 || n > 1300 {
			t.Fatalf("XLEN after one pass = %d, want about 1,000", n)
		}
		e.checkKept(t, ids, len(ids)-1000)
	})

	t.Run("a burst within one millisecond is trimmed too", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.createGroup(t, "count")
		e.createGroup(t, "history")
		// 12,000 entries with ids 1000-1 .. 1000-12000: no timestamps to interpolate between.
		ids := make([]string, 12_000)
		for i := range ids {
			ids[i] = fmt.Sprintf("1000-%d", i+1)
		}
		e.addIDs(t, ids)
		e.consumeAll(t, "count", len(ids))
		e.consumeAll(t, "history", len(ids))
		tr := e.trimmer(100)
		lens := []int64{e.trimOnce(t, tr)}
		for lens[len(lens)-1] > 300 && len(lens) < 10 {
			lens = append(lens, e.trimOnce(t, tr))
		}
		t.Logf("12,000 entries in one millisecond, MaxLen 100: lengths after each pass %v", lens)
		if n := lens[len(lens)-1]; n < 100 || n > 300 {
			t.Fatalf("XLEN after %d passes = %d, want about 100", len(lens), n)
		}
		if lens[0] > 12_000-10_000+200 {
			t.Errorf("the first pass left %d entries, want about 10,000 fewer", lens[0])
		}
		e.checkKept(t, ids, len(ids)-100)
	})

	t.Run("never past an entry still pending", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.createGroup(t, "count")
		e.createGroup(t, "history")
		ids := e.add(t, 1000)
		e.consumeAll(t, "count", 1000)
		e.consumeAll(t, "history", 300) // entries 300.. read but not acknowledged
		if p := e.pending(t, "history"); p.Lower != ids[300] {
			t.Fatalf("oldest pending = %s, want %s", p.Lower, ids[300])
		}
		n := e.trimOnce(t, e.trimmer(100))
		t.Logf("1,000 entries, 700 pending, MaxLen 100: %d left", n)
		e.checkKept(t, ids, 300)
		if n > 900 {
			t.Errorf("XLEN = %d: the acknowledged entries before the oldest pending one were not trimmed", n)
		}
	})

	t.Run("never past an entry not yet delivered", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.createGroup(t, "count")
		e.createGroup(t, "history")
		ids := e.add(t, 1000)
		e.consumeAll(t, "count", 1000)
		e.ack(t, "history", e.readAs(t, "history", "c", 600)) // 600.. never read by history
		n := e.trimOnce(t, e.trimmer(100))
		t.Logf("1,000 entries, 400 undelivered, MaxLen 100: %d left", n)
		e.checkKept(t, ids, 600)
	})

	t.Run("a group not yet created: no trim at all", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.createGroup(t, "count") // history has never started
		e.add(t, 1000)
		e.consumeAll(t, "count", 1000)
		tr := e.trimmer(100)
		removed, err := tr.TrimOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := e.xlen(t); removed != 0 || n != 1000 {
			t.Fatalf("removed %d, XLEN %d; want nothing trimmed", removed, n)
		}
	})

	t.Run("no stream, or a short one: nothing to do", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		if n, err := e.trimmer(100).TrimOnce(t.Context()); n != 0 || err != nil {
			t.Fatalf("TrimOnce on a missing stream = %d, %v", n, err)
		}
		e.createGroup(t, "count")
		e.createGroup(t, "history")
		e.add(t, 50)
		e.consumeAll(t, "count", 50)
		e.consumeAll(t, "history", 50)
		if n := e.trimOnce(t, e.trimmer(100)); n != 50 {
			t.Fatalf("XLEN = %d, want the 50 entries kept", n)
		}
	})

	t.Run("Run trims periodically", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.createGroup(t, "count")
		e.createGroup(t, "history")
		e.add(t, 1000)
		e.consumeAll(t, "count", 1000)
		e.consumeAll(t, "history", 1000)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.trimmer(100).Run(ctx) }()
		testenv.WaitUntil(t, "Run trims the stream", func() bool { return e.xlen(t) < 1000 })
		cancel()
		if err := testenv.Recv(t, done, "Trimmer.Run to return"); err != nil {
			t.Fatal(err)
		}
	})
}
