package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestConsumer_DeadLettersEntriesOutOfDeliveries: one entry its handler can never apply, in a
// batch with four it can. Each failed batch leaves all five pending; once Redis has delivered them
// more than Retry.MaxAttempts times, each is tried once alone: the four succeed and are acknowledged,
// the poison one goes to <stream>:dead (with where it came from) and is acknowledged too, and
// nothing is retried after that. Rounds run by hand (Once), so the delivery counts are exact.
func TestConsumer_DeadLettersEntriesOutOfDeliveries(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ids := e.add(t, 5)
	poison := ids[2]
	applied := map[string]int{}
	calls := 0
	c := events.NewConsumer(e.rdb, events.ConsumerConfig{
		Stream: e.stream, Group: "g", Name: "c1", BatchSize: 10, BatchWait: 20 * time.Millisecond,
		ClaimIdle: 0, ClaimEvery: 0, Retry: domain.RetryPolicy{MaxAttempts: 3}, Backoff: time.Millisecond,
	}, func(_ context.Context, msgs []events.Message) error {
		calls++
		for _, m := range msgs {
			if m.ID == poison {
				return errors.New("cannot apply this one")
			}
			applied[m.ID]++
		}
		return nil
	}, testenv.Logger(t))

	ctx := context.Background()
	// Delivery 1 (read), 2 and 3 (reclaims) fail as a batch; the 4th delivery exceeds 3.
	for round := 1; round <= 3; round++ {
		if err := c.Once(ctx); err != nil {
			t.Fatal(err)
		}
		if p := e.pending(t, "g"); p.Count != 5 {
			t.Fatalf("round %d: %d pending, want 5", round, p.Count)
		}
	}
	if err := c.Once(ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.pending(t, "g"); p.Count != 0 {
		t.Fatalf("%d entries still pending after their last try", p.Count)
	}
	if c.Stats.DeadLettered.Load() != 1 {
		t.Fatalf("%d dead-lettered, want 1", c.Stats.DeadLettered.Load())
	}
	dead, err := e.rdb.XRange(ctx, events.DeadLetterStream(e.stream), "-", "+").Result()
	if err != nil || len(dead) != 1 {
		t.Fatalf("dead-letter stream: %v %v", dead, err)
	}
	v := dead[0].Values
	if v["dead_entry"] != poison || v["dead_group"] != "g" || v["dead_deliveries"] != "4" || v["dead_error"] != "cannot apply this one" || v["article"] == nil {
		t.Fatalf("dead-letter entry %v", v)
	}
	for _, id := range ids {
		if id != poison && applied[id] == 0 {
			t.Fatalf("entry %s was never applied", id)
		}
	}
	before := calls
	if err := c.Once(ctx); err != nil {
		t.Fatal(err)
	}
	if calls != before {
		t.Fatalf("the handler ran again after every entry was settled")
	}

	t.Run("without a bound on deliveries an entry is retried for ever", func(t *testing.T) {
		e := setup(t)
		e.add(t, 1)
		c := events.NewConsumer(e.rdb, events.ConsumerConfig{Stream: e.stream, Group: "g", Name: "c1", BatchSize: 10, BatchWait: 20 * time.Millisecond, Backoff: time.Millisecond},
			func(context.Context, []events.Message) error { return errors.New("no") }, testenv.Logger(t))
		for range 6 {
			if err := c.Once(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if p := e.pending(t, "g"); p.Count != 1 || c.Stats.DeadLettered.Load() != 0 {
			t.Fatalf("pending %d, dead-lettered %d", p.Count, c.Stats.DeadLettered.Load())
		}
	})
}
