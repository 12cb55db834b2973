package events_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// publisherOpts configures a publisher made by newPublisher; zero values get defaults.
type publisherOpts struct {
	Client     redis.UniversalClient // default: the env's client
	Buffer     int                   // default 1000
	BatchSize  int                   // default 100
	FlushEvery time.Duration         // default 1h: only full batches and shutdown flush
}

func (e *env) newPublisher(o publisherOpts) *events.Publisher {
	if o.Client == nil {
		o.Client = e.rdb
	}
	if o.Buffer == 0 {
		o.Buffer = 1000
	}
	if o.BatchSize == 0 {
		o.BatchSize = 100
	}
	if o.FlushEvery == 0 {
		o.FlushEvery = time.Hour
	}
	return events.NewPublisher(o.Client, events.PublisherConfig{
		Stream: e.stream, Buffer: o.Buffer, BatchSize: o.BatchSize, FlushEvery: o.FlushEvery,
	}, e.log)
}

// run starts p.Run; the returned stop cancels it and waits for it to return (flushing).
func run(t *testing.T, p *events.Publisher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := testenv.Recv(t, done, "Publisher.Run to return"); err != nil {
			t.Errorf("Publisher.Run returned %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// recordAll records evs from another goroutine and reports when Record has returned for all of
// them: if Record ever blocked, recv would give up instead of hanging the test.
func recordAll(t *testing.T, p *events.Publisher, evs []domain.ReadEvent) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, ev := range evs {
			p.Record(ev)
		}
	}()
	testenv.Recv(t, done, "Record to return for every event (it must never block)")
}

func TestPublisher(t *testing.T) {
	t.Parallel()

	t.Run("full batches go out as one pipelined round trip each", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		hook := &cmdHook{}
		client := testenv.NewRedis(t).Client
		client.AddHook(hook)
		p := e.newPublisher(publisherOpts{Client: client, Buffer: 1000, BatchSize: 100})
		evs := newEvents(1000, eventOpts{})
		recordAll(t, p, evs) // all buffered before Run starts: ten full batches
		run(t, p)

		testenv.WaitUntil(t, "1,000 events are published", func() bool { return p.Stats.Published.Load() == 1000 })
		if got := hook.roundTrips(); !slices.Equal(got, slices.Repeat([]int{100}, 10)) {
			t.Errorf("round trips (commands in each) = %v, want 10 of 100", got)
		}
		if n := e.xlen(t); n != 1000 {
			t.Errorf("XLEN = %d, want 1000", n)
		}
		// The entries are the events, in order, and decode back to them.
		msgs, err := e.rdb.XRange(t.Context(), e.stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range msgs {
			got, ok := events.DecodeReadEvent(m.Values)
			if !ok || got != evs[i] {
				t.Fatalf("entry %d decodes to %+v (ok=%v), want %+v", i, got, ok, evs[i])
			}
			if m.Values["v"] != events.ReadEntryVersion.String() {
				t.Fatalf("entry %d: %v, want v=%s", i, m.Values, events.ReadEntryVersion)
			}
		}
		if d, f := p.Stats.Dropped.Load(), p.Stats.Failed.Load(); d != 0 || f != 0 {
			t.Errorf("Dropped = %d, Failed = %d; want 0, 0", d, f)
		}
	})

	t.Run("a partial batch goes out after FlushEvery", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		hook := &cmdHook{}
		client := testenv.NewRedis(t).Client
		client.AddHook(hook)
		p := e.newPublisher(publisherOpts{Client: client, BatchSize: 100, FlushEvery: 5 * time.Millisecond})
		run(t, p)
		recordAll(t, p, newEvents(7, eventOpts{}))
		testenv.WaitUntil(t, "the 7 events are published", func() bool { return p.Stats.Published.Load() == 7 })
		if n := e.xlen(t); n != 7 {
			t.Errorf("XLEN = %d, want 7", n)
		}
		if got := hook.roundTrips(); !slices.Equal(got, []int{7}) {
			t.Errorf("round trips (XADDs in each) = %v, want one of 7", got)
		}
	})

	t.Run("Record never blocks: a full buffer drops and counts exactly the overflow", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		p := e.newPublisher(publisherOpts{Buffer: 10, BatchSize: 4, FlushEvery: 5 * time.Millisecond})
		recordAll(t, p, newEvents(1000, eventOpts{})) // Run not started: nothing drains the buffer
		if d := p.Stats.Dropped.Load(); d != 990 {
			t.Fatalf("Dropped = %d, want 990", d)
		}
		// The ten buffered events are still sent once Run starts.
		run(t, p)
		testenv.WaitUntil(t, "the 10 buffered events are published", func() bool { return p.Stats.Published.Load() == 10 })
		if n := e.xlen(t); n != 10 {
			t.Errorf("XLEN = %d, want 10", n)
		}
	})

	t.Run("cancelling Run flushes what is buffered", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		// Neither a full batch nor the flush timer will send these: only the shutdown flush.
		p := e.newPublisher(publisherOpts{Buffer: 500, BatchSize: 1000, FlushEvery: time.Hour})
		stop := run(t, p)
		recordAll(t, p, newEvents(321, eventOpts{}))
		stop()
		if got := p.Stats.Published.Load(); got != 321 {
			t.Fatalf("Published after Run returned = %d, want 321", got)
		}
		if n := e.xlen(t); n != 321 {
			t.Errorf("XLEN = %d, want 321", n)
		}
	})

	t.Run("cancelled before it ever ran, Run still flushes the buffer", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		p := e.newPublisher(publisherOpts{Buffer: 250, BatchSize: 100})
		recordAll(t, p, newEvents(250, eventOpts{}))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if got, n := p.Stats.Published.Load(), e.xlen(t); got != 250 || n != 250 {
			t.Fatalf("Published = %d, XLEN = %d; want 250, 250", got, n)
		}
	})

	t.Run("Redis down: Record never blocks and every lost event is counted", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		p := e.newPublisher(publisherOpts{Client: testenv.DeadRedis(t), Buffer: 100, BatchSize: 10, FlushEvery: time.Millisecond})
		run(t, p)
		recordAll(t, p, newEvents(1000, eventOpts{}))
		testenv.WaitUntil(t, "every event is either dropped or failed", func() bool {
			return p.Stats.Dropped.Load()+p.Stats.Failed.Load() == 1000
		})
		if got := p.Stats.Published.Load(); got != 0 {
			t.Errorf("Published = %d with Redis down", got)
		}
		t.Logf("Redis down: 1,000 events recorded, %d failed, %d dropped (buffer full)", p.Stats.Failed.Load(), p.Stats.Dropped.Load())
	})
}

// A Redis outage loses exactly the events recorded while Redis is down, the request path never
// waits on it, and publishing resumes by itself when Redis is back.
func TestPublisher_RedisOutage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	srv, client := privateRedis(t)
	p := e.newPublisher(publisherOpts{Client: client, Buffer: 10_000, BatchSize: 256, FlushEvery: 5 * time.Millisecond})
	run(t, p)
	var recorded int64
	record := func(evs []domain.ReadEvent) {
		recordAll(t, p, evs)
		recorded += int64(len(evs))
	}
	settled := func() bool {
		return p.Stats.Published.Load()+p.Stats.Failed.Load()+p.Stats.Dropped.Load() == recorded
	}

	record(newEvents(500, eventOpts{}))
	testenv.WaitUntil(t, "500 events are published before the outage", func() bool { return p.Stats.Published.Load() == 500 })

	// The outage: Redis is down for outage while readers go on at rate reads per second.
	const rate = 5000 // reads per second
	const outage = time.Second
	srv.Stop()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond) // load generation, not synchronization
	var whileDown int64
	for time.Since(start) < outage {
		<-tick.C
		evs := newEvents(rate/100, eventOpts{})
		record(evs)
		whileDown += int64(len(evs))
	}
	tick.Stop()
	testenv.WaitUntil(t, "every event recorded while Redis is down is accounted for", settled)
	lost := p.Stats.Failed.Load() + p.Stats.Dropped.Load()
	t.Logf("Redis down for %v at %d reads/s: %d events recorded while down, %d lost (%d failed, %d dropped); "+
		"an outage of N seconds loses about N × rate events",
		outage, rate, whileDown, lost, p.Stats.Failed.Load(), p.Stats.Dropped.Load())
	if lost != whileDown {
		t.Errorf("lost %d events, want exactly the %d recorded while Redis was down", lost, whileDown)
	}
	if got := p.Stats.Published.Load(); got != 500 {
		t.Errorf("Published = %d during the outage, want still 500", got)
	}

	// Redis is back (empty: the private server keeps nothing). Publishing resumes without help.
	srv.Start()
	before := p.Stats.Published.Load()
	testenv.WaitUntil(t, "publishing resumes after Redis restarts", func() bool {
		record(newEvents(1, eventOpts{}))
		return p.Stats.Published.Load() > before
	})
	record(newEvents(100, eventOpts{}))
	testenv.WaitUntil(t, "everything recorded is accounted for", settled)
	// A fresh client looks: the publisher's may still be in go-redis's dial back-off for a moment.
	look := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer look.Close()
	n, err := look.XLen(t.Context(), e.stream).Result()
	if err != nil {
		t.Fatal(err)
	}
	if published := p.Stats.Published.Load(); n != published-500 {
		t.Errorf("XLEN after restart = %d, want %d (published since the restart)", n, published-500)
	}
	if p.Stats.Published.Load() < 500+100 {
		t.Errorf("Published = %d, want at least 600", p.Stats.Published.Load())
	}
}
