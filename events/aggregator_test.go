package events_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// newAggregator returns an aggregator on the env's stream whose periodic flush only the returned
// channel drives; signed-in reads go to pub (nil: a publisher that is never run).
func (e *env) newAggregator(cfg events.AggregatorConfig, client redis.UniversalClient, pub *events.Publisher) (*events.ReadAggregator, chan time.Time) {
	ticks := make(chan time.Time)
	cfg.Stream, cfg.Ticks = e.stream, ticks
	if client == nil {
		client = e.rdb
	}
	if pub == nil {
		pub = e.newPublisher(publisherOpts{})
	}
	return events.NewReadAggregator(client, cfg, pub, e.log), ticks
}

// streamReads reads the whole stream: the reads per article, the entries, and the batch ids.
func (e *env) streamReads(t *testing.T) (reads map[int64]int64, entries int, ids []string) {
	t.Helper()
	msgs, err := e.rdb.XRange(context.Background(), e.stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	reads = map[int64]int64{}
	for _, m := range msgs {
		evs, ok := events.DecodeReadEntry(m.Values, nil)
		if !ok || m.Values["v"] != events.ReadEntryVersion.String() {
			t.Fatalf("entry %s does not decode, or is not at v=%s: %v", m.ID, events.ReadEntryVersion, m.Values)
		}
		for _, ev := range evs {
			reads[ev.ArticleID] += ev.Reads()
		}
		ids = append(ids, evs[0].ID)
	}
	return reads, len(msgs), ids
}

// waitEntries blocks (in Redis, XREAD BLOCK) until the stream holds at least n entries.
func (e *env) waitEntries(t *testing.T, n int) {
	t.Helper()
	last := "0"
	for seen := 0; seen < n; {
		res, err := e.rdb.XRead(context.Background(), &redis.XReadArgs{Streams: []string{e.stream, last}, Block: 20 * time.Second}).Result()
		if err != nil {
			t.Fatalf("waiting for %d stream entries (saw %d): %v", n, seen, err)
		}
		msgs := res[0].Messages
		seen += len(msgs)
		last = msgs[len(msgs)-1].ID
	}
}

// Many goroutines reading at once, with flushes running between and during their reads: after a
// last flush the stream holds exactly every read, per article, in batches with distinct ids.
func TestReadAggregator_ConcurrentReadsCountExactly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	agg, _ := e.newAggregator(events.AggregatorConfig{EntryMax: 2}, nil, nil)
	const goroutines, perGoroutine, articles = 16, 2000, 5
	ctx := context.Background()
	var readers sync.WaitGroup
	for g := range goroutines {
		readers.Go(func() {
			for i := range perGoroutine {
				agg.Record(domain.ReadEvent{ArticleID: int64((g+i)%articles + 1)})
			}
		})
	}
	readersDone := make(chan struct{})
	go func() { readers.Wait(); close(readersDone) }()
	flushes := 0
	for running := true; running; flushes++ {
		select {
		case <-readersDone:
			running = false
		default:
		}
		if err := agg.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reads, entries, ids := e.streamReads(t)
	want := map[int64]int64{}
	for g := range goroutines {
		for i := range perGoroutine {
			want[int64((g+i)%articles+1)]++
		}
	}
	if !maps.Equal(reads, want) {
		t.Fatalf("stream counts %v, want %v (after %d flushes)", reads, want, flushes)
	}
	if got := agg.Stats.Sent.Load(); got != goroutines*perGoroutine {
		t.Errorf("Stats.Sent = %d, want %d", got, goroutines*perGoroutine)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("batch id %s used twice", id)
		}
		seen[id] = true
	}
	t.Logf("%d reads in %d entries over %d flushes", goroutines*perGoroutine, entries, flushes)
}

// A flush with many articles splits them into entries of at most EntryMax, each its own batch.
func TestReadAggregator_EntriesHoldAtMostEntryMaxArticles(t *testing.T) {
	t.Parallel()
	e := setup(t)
	agg, _ := e.newAggregator(events.AggregatorConfig{EntryMax: 2}, nil, nil)
	for a := range int64(5) {
		for range a + 1 {
			agg.Record(domain.ReadEvent{ArticleID: a + 1})
		}
	}
	if err := agg.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	reads, entries, ids := e.streamReads(t)
	if want := map[int64]int64{1: 1, 2: 2, 3: 3, 4: 4, 5: 5}; !maps.Equal(reads, want) || entries != 3 {
		t.Fatalf("%d entries with %v, want 3 with %v", entries, reads, want)
	}
	if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Fatalf("batch ids %v are not distinct", ids)
	}
	if err := agg.Flush(context.Background()); err != nil { // nothing new: nothing sent
		t.Fatal(err)
	}
	if _, entries, _ := e.streamReads(t); entries != 3 {
		t.Fatalf("an empty flush wrote entries: %d now", entries)
	}
}

// Run sends the tally at each tick, early when a stripe fills, and once more when stopped.
func TestReadAggregator_RunFlushesOnTickWhenFullAndAtShutdown(t *testing.T) {
	t.Parallel()
	e := setup(t)
	t.Run("tick and shutdown", func(t *testing.T) {
		agg, ticks := e.newAggregator(events.AggregatorConfig{}, nil, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- agg.Run(ctx) }()
		for range 5 {
			agg.Record(domain.ReadEvent{ArticleID: 7})
		}
		ticks <- time.Now() // handed over: Run flushes next
		e.waitEntries(t, 1)
		for range 3 {
			agg.Record(domain.ReadEvent{ArticleID: 7})
		}
		cancel()
		if err := testenv.Recv(t, done, "Run to return"); err != nil {
			t.Fatal(err)
		}
		reads, entries, _ := e.streamReads(t)
		if reads[7] != 8 || entries != 2 {
			t.Fatalf("%d entries with %v, want 2 with 8 reads of article 7", entries, reads)
		}
	})
}

func TestReadAggregator_FlushesEarlyWhenFull(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// FlushAt below the stripe count: any stripe's first read asks for a flush.
	agg, _ := e.newAggregator(events.AggregatorConfig{FlushAt: 1}, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agg.Run(ctx) }()
	agg.Record(domain.ReadEvent{ArticleID: 3})
	e.waitEntries(t, 1) // no tick ever comes
	cancel()
	if err := testenv.Recv(t, done, "Run to return"); err != nil {
		t.Fatal(err)
	}
	if reads, _, _ := e.streamReads(t); reads[3] != 1 {
		t.Fatalf("stream counts %v, want article 3 once", reads)
	}
}

// A signed-in read is not aggregated: it goes on to the publisher as its own event, with its id.
func TestReadAggregator_SignedInReadsGoToThePublisher(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pub := e.newPublisher(publisherOpts{})
	stop := run(t, pub)
	agg, _ := e.newAggregator(events.AggregatorConfig{}, nil, pub)
	ev := newEvents(1, eventOpts{UserID: 42})[0]
	agg.Record(ev)
	if err := agg.Flush(context.Background()); err != nil { // the tally is empty: writes nothing
		t.Fatal(err)
	}
	stop() // flushes the publisher
	msgs, err := e.rdb.XRange(context.Background(), e.stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("%d entries, want the one signed-in event", len(msgs))
	}
	got, ok := events.DecodeReadEntry(msgs[0].Values, nil)
	if !ok || len(got) != 1 || got[0] != ev {
		t.Fatalf("entry decodes to %+v, %v; want %+v", got, ok, ev)
	}
}

// A batch whose write fails is kept under its id and sent at the next flush; once RetryMax is
// reached, further failed batches are lost (and counted), as they are at shutdown.
func TestReadAggregator_FailedBatchesAreRetriedUnderTheirID(t *testing.T) {
	t.Parallel()
	e := setup(t)
	outage := &testenv.RedisOutage{}
	client := testenv.NewRedis(t).Client
	client.AddHook(outage)
	agg, _ := e.newAggregator(events.AggregatorConfig{RetryMax: 1}, client, nil)
	ctx := context.Background()

	outage.On(true)
	agg.Record(domain.ReadEvent{ArticleID: 1})
	if err := agg.Flush(ctx); !errors.Is(err, testenv.ErrRedisOutage) {
		t.Fatalf("Flush during the outage = %v", err)
	}
	agg.Record(domain.ReadEvent{ArticleID: 2})
	agg.Record(domain.ReadEvent{ArticleID: 2})
	if err := agg.Flush(ctx); err == nil { // the kept batch and the new one fail; only one may stay
		t.Fatal("Flush during the outage succeeded")
	}
	if lost, kept := agg.Stats.Lost.Load(), agg.Stats.Retried.Load(); lost != 2 || kept != 2 {
		t.Fatalf("lost %d reads, %d retries; want 2 lost (the second batch), 2 retries (the first batch twice)", lost, kept)
	}
	outage.On(false)
	agg.Record(domain.ReadEvent{ArticleID: 3})
	if err := agg.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	reads, entries, _ := e.streamReads(t)
	if want := map[int64]int64{1: 1, 3: 1}; !maps.Equal(reads, want) || entries != 2 {
		t.Fatalf("%d entries with %v, want 2 with %v", entries, reads, want)
	}
}

func TestDecodeReadEntry_Batches(t *testing.T) {
	t.Parallel()
	got, ok := events.DecodeReadEntry(map[string]any{"id": "b1", "counts": "12:5,13:1"}, nil)
	want := []domain.ReadEvent{{ID: "b1", ArticleID: 12, Count: 5}, {ID: "b1", ArticleID: 13, Count: 1}}
	if !ok || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("DecodeReadEntry = %+v, %v; want %+v", got, ok, want)
	}
	prior := []domain.ReadEvent{{ID: "x", ArticleID: 1}}
	for _, vals := range []map[string]any{
		{"counts": "12:5"}, {"id": "", "counts": "12:5"}, {"id": "b", "counts": ""}, {"id": "b", "counts": "12"},
		{"id": "b", "counts": "12:0"}, {"id": "b", "counts": "0:3"}, {"id": "b", "counts": "12:5,x:1"},
		{"id": "b", "counts": "12:-1"}, {"id": "b", "counts": "12:5,"},
	} {
		if got, ok := events.DecodeReadEntry(vals, prior); ok || len(got) != 1 {
			t.Errorf("DecodeReadEntry(%v) = %+v, %v; want rejected and nothing appended", vals, got, ok)
		}
	}
}
