package events_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func TestConsumer(t *testing.T) {
	t.Parallel()

	t.Run("batches hold at most BatchSize entries and all are handled and acked", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		ids := e.add(t, 2500)
		rec := &recorder{}
		c := e.startConsumer(t, rec.handle, consumerOpts{BatchSize: 1000, BatchWait: 200 * time.Millisecond})
		testenv.WaitUntil(t, "2,500 entries are acked", func() bool { return c.Stats.Acked.Load() == 2500 })

		batches := rec.handled()
		var sizes []int
		for _, b := range batches {
			sizes = append(sizes, len(b))
			if len(b) > 1000 {
				t.Errorf("a batch of %d entries, want at most 1,000", len(b))
			}
		}
		if !slices.Equal(sizes, []int{1000, 1000, 500}) {
			t.Errorf("batch sizes = %v, want [1000 1000 500] (the stream was full before the consumer started)", sizes)
		}
		for _, id := range ids {
			if n := rec.times(id); n != 1 {
				t.Fatalf("entry %s handled %d times, want once", id, n)
			}
		}
		if p := e.pending(t, "g"); p.Count != 0 {
			t.Errorf("%d entries still pending", p.Count)
		}
	})

	t.Run("a partial batch is handed over after BatchWait", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.add(t, 7)
		got := make(chan int, 10)
		c := e.startConsumer(t, func(_ context.Context, msgs []events.Message) error {
			got <- len(msgs)
			return nil
		}, consumerOpts{BatchSize: 1000, BatchWait: 50 * time.Millisecond})
		if n := testenv.Recv(t, got, "the partial batch"); n != 7 {
			t.Fatalf("first batch has %d entries, want all 7", n)
		}
		testenv.WaitUntil(t, "7 entries are acked", func() bool { return c.Stats.Acked.Load() == 7 })
	})

	t.Run("a handler error leaves the batch pending; it is retried", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		ids := e.add(t, 5)
		failed, retrying := make(chan struct{}), make(chan struct{})
		release := make(chan struct{})
		t.Cleanup(func() {
			select {
			case <-release:
			default:
				close(release)
			}
		})
		rec := &recorder{before: func(call int64, _ []events.Message) error {
			switch call {
			case 1:
				close(failed)
				return errors.New("database unavailable")
			case 2:
				close(retrying)
				<-release // hold the retry while the test looks at the pending list
			}
			return nil
		}}
		c := e.startConsumer(t, rec.handle, consumerOpts{Name: "worker"})
		testenv.Recv(t, failed, "the first (failing) attempt")
		testenv.Recv(t, retrying, "the retry")
		p := e.pending(t, "g")
		if p.Count != 5 || p.Lower != ids[0] || p.Higher != ids[4] || p.Consumers["worker"] != 5 {
			t.Fatalf("XPENDING after the failure = %+v, want the 5 entries pending for worker", p)
		}
		close(release)
		testenv.WaitUntil(t, "the retried entries are acked", func() bool { return c.Stats.Acked.Load() == 5 })
		if p := e.pending(t, "g"); p.Count != 0 {
			t.Errorf("%d entries still pending after the retry", p.Count)
		}
		for _, id := range ids {
			if n := rec.times(id); n != 1 {
				t.Errorf("entry %s handled successfully %d times, want once", id, n)
			}
		}
		if f, r := c.Stats.Failures.Load(), c.Stats.Reclaimed.Load(); f != 1 || r != 5 {
			t.Errorf("Failures = %d, Reclaimed = %d; want 1, 5", f, r)
		}
	})

	t.Run("entries a dead consumer read but never acked are reclaimed", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		ids := e.add(t, 10)
		e.createGroup(t, "g")
		if got := e.readAs(t, "g", "dead", 10); !slices.Equal(got, ids) {
			t.Fatalf("the dead consumer read %v, want %v", got, ids)
		}
		if p := e.pending(t, "g"); p.Consumers["dead"] != 10 {
			t.Fatalf("XPENDING = %+v, want 10 pending for dead", p)
		}
		rec := &recorder{}
		c := e.startConsumer(t, rec.handle, consumerOpts{Name: "alive", ClaimIdle: 50 * time.Millisecond, ClaimEvery: 10 * time.Millisecond})
		testenv.WaitUntil(t, "the dead consumer's 10 entries are acked", func() bool { return c.Stats.Acked.Load() == 10 })
		for _, id := range ids {
			if n := rec.times(id); n != 1 {
				t.Errorf("entry %s handled %d times, want once", id, n)
			}
		}
		if r := c.Stats.Reclaimed.Load(); r != 10 {
			t.Errorf("Reclaimed = %d, want 10", r)
		}
		if p := e.pending(t, "g"); p.Count != 0 {
			t.Errorf("XPENDING = %+v, want nothing pending", p)
		}
	})

	t.Run("a Block longer than the client's read timeout does not break reading", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		client := testenv.NewRedisClient(t, func(o *redis.UniversalOptions) {
			o.ReadTimeout = 100 * time.Millisecond
			o.MaxRetries = -1
		})
		// Every XREADGROUP is reported: when it was sent, and how it ended.
		firstRead := make(chan struct{})
		type readResult struct {
			took time.Duration
			n    int
			err  error
		}
		reads := make(chan readResult, 100)
		hook := &cmdHook{
			beforeCmd: func(_ context.Context, cmd redis.Cmder) {
				if cmd.Name() == "xreadgroup" {
					select {
					case <-firstRead:
					default:
						close(firstRead) // only the consumer's goroutine sends XREADGROUP
					}
				}
			},
			onCmd: func(_ context.Context, cmd redis.Cmder, took time.Duration, err error) {
				if c, ok := cmd.(*redis.XStreamSliceCmd); ok && cmd.Name() == "xreadgroup" {
					n := 0
					for _, s := range c.Val() {
						n += len(s.Messages)
					}
					if errors.Is(err, redis.Nil) {
						err = nil
					}
					select {
					case reads <- readResult{took, n, err}:
					default:
					}
				}
			},
		}
		client.AddHook(hook)
		got := make(chan []events.Message, 1)
		e.startConsumer(t, func(_ context.Context, msgs []events.Message) error {
			got <- msgs
			return nil
		}, consumerOpts{Client: client, BatchSize: 1, BatchWait: 2 * time.Second, Backoff: time.Hour})

		testenv.Recv(t, firstRead, "the consumer's first XREADGROUP")
		const after = 300 * time.Millisecond // three read timeouts into the block
		added := make(chan string, 1)
		time.AfterFunc(after, func() {
			id, err := e.rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: e.stream, Values: values(newEvents(1, eventOpts{})[0])}).Result()
			if err != nil {
				id = "error: " + err.Error()
			}
			added <- id
		})
		id := testenv.Recv(t, added, "the entry to be added")
		for {
			r := testenv.Recv(t, reads, "an XREADGROUP to return")
			if r.err != nil {
				t.Fatalf("XREADGROUP failed after %v: %v (a read timeout of 100ms must not cut a 2s BLOCK)", r.took, r.err)
			}
			if r.n == 1 {
				t.Logf("the blocked XREADGROUP returned the entry after %v (client read timeout 100ms)", r.took)
				if r.took < after {
					t.Errorf("the read returned after %v, before the entry was added at %v: it did not block", r.took, after)
				}
				break
			}
		}
		msgs := testenv.Recv(t, got, "the entry added while the consumer was blocked")
		if len(msgs) != 1 || msgs[0].ID != id {
			t.Fatalf("handler got %v, want the entry %s", msgs, id)
		}
	})
}

// After the Redis it reads from restarts, a consumer resumes by itself: it recreates its group
// (the restarted server is empty) and handles what is written from then on.
func TestConsumer_ResumesAfterRedisRestart(t *testing.T) {
	t.Parallel()

	for _, downAtStart := range []bool{false, true} {
		t.Run(fmt.Sprintf("down at start=%v", downAtStart), func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			srv, client := privateRedis(t)
			var readErrors atomic.Int64
			client.AddHook(&cmdHook{onCmd: func(_ context.Context, _ redis.Cmder, _ time.Duration, err error) {
				if err != nil && !errors.Is(err, redis.Nil) {
					readErrors.Add(1)
				}
			}})
			// Entries are written by a fresh client each time: the consumer's may still be in
			// go-redis's dial back-off for a moment after the restart.
			add := func(n int) []string {
				w := redis.NewClient(&redis.Options{Addr: srv.Addr})
				defer w.Close()
				return addValues(t, w, e.stream, n, func(int) map[string]any { return nil })
			}
			rec := &recorder{}
			if downAtStart {
				srv.Stop()
			}
			c := e.startConsumer(t, rec.handle, consumerOpts{Client: client, Backoff: 20 * time.Millisecond})
			if !downAtStart {
				ids := add(5)
				testenv.WaitUntil(t, "5 entries are acked before the outage", func() bool { return c.Stats.Acked.Load() == 5 })
				for _, id := range ids {
					if rec.times(id) != 1 {
						t.Fatalf("entry %s not handled once", id)
					}
				}
				srv.Stop()
			}
			testenv.WaitUntil(t, "the consumer notices the outage", func() bool { return readErrors.Load() >= 3 })
			srv.Start()
			ids := add(5)
			testenv.WaitUntil(t, "the 5 entries written after the restart are handled", func() bool {
				for _, id := range ids {
					if rec.times(id) != 1 {
						return false
					}
				}
				return true
			})
			t.Logf("%d failed Redis commands during the outage", readErrors.Load())
		})
	}
}
