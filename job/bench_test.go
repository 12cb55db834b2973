package job_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/service"
)

// BenchmarkReadCountConsumer measures one read-count consumer end to end: stream → PostgreSQL
// (one statement per batch) → Redis hashes → XACK, with batches of 1,000. The stream is filled
// with b.N events over 100 articles before the timer starts; the timer stops when all are acked.
//
//	go test -run '^$' -bench BenchmarkReadCountConsumer -benchtime 50000x ./job/
//
// It reports events/s and PostgreSQL statements per 1,000 events (target: ≥ 20,000 events/s, ≤ 5).
func BenchmarkReadCountConsumer(b *testing.B) {
	e := setup(b, envOpts{Trace: true})
	arts := e.articles(b, 100) // hashes filled: every batch runs the increment script
	e.addEvents(b, readEvents(b.N, arts))
	h := job.ReadCountHandler(service.NewReadService(e.reads, nil), e.log)
	c := events.NewConsumer(e.rdb, events.ConsumerConfig{
		Stream: e.stream, Group: job.GroupReadCount, Name: "bench", BatchSize: 1000, BatchWait: 100 * time.Millisecond,
		ClaimIdle: time.Minute, ClaimEvery: time.Minute, Backoff: 10 * time.Millisecond,
	}, h, e.log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	stmtsBefore := e.stmts.count()

	b.ResetTimer()
	start := time.Now()
	go func() { defer close(done); _ = c.Run(ctx) }()
	deadline := start.Add(5 * time.Minute)
	for c.Stats.Acked.Load() < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d events acked after 5 minutes", c.Stats.Acked.Load(), b.N)
		}
		time.Sleep(200 * time.Microsecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-done

	stmts := e.stmts.count() - stmtsBefore
	if total := e.pgTotal(b); total != int64(b.N) {
		b.Fatalf("PostgreSQL counted %d reads, want %d", total, b.N)
	}
	if f := c.Stats.Failures.Load(); f != 0 {
		b.Fatalf("%d failed batches", f)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(stmts)*1000/float64(b.N), "stmts/1000events")
	b.ReportMetric(float64(c.Stats.Batches.Load()), "batches")
}

// BenchmarkAnonymousReads measures what an anonymous read costs off the request path now that
// reads are aggregated: b.N reads are recorded through the aggregator over 100 articles, flushed
// every perFlush reads (one flush interval's worth), then one read-count consumer applies the
// batches end to end (stream → one SQL statement per consumer batch → Redis hashes → XACK). The
// timer covers the flushes and the consumer; the wall time per read bounds the CPU that
// PostgreSQL, Redis and the consumer spend on it (target: < 2 µs).
//
//	go test -run '^$' -bench BenchmarkAnonymousReads -benchtime 200000x ./job/
func BenchmarkAnonymousReads(b *testing.B) {
	for _, perFlush := range []int{100, 1_000, 10_000} { // 1, 10 and 100 reads per article per flush
		b.Run(fmt.Sprintf("reads-per-flush=%d", perFlush), func(b *testing.B) {
			e := setup(b, envOpts{})
			arts := e.articles(b, 100)
			agg := events.NewReadAggregator(e.rdb, events.AggregatorConfig{Stream: e.stream, FlushAt: 1 << 40, EntryMax: 500}, nil, e.log)
			h := job.ReadCountHandler(service.NewReadService(e.reads, nil), e.log)
			c := events.NewConsumer(e.rdb, events.ConsumerConfig{
				Stream: e.stream, Group: job.GroupReadCount, Name: "bench", BatchSize: 1000, BatchWait: 10 * time.Millisecond,
				ClaimIdle: time.Minute, ClaimEvery: time.Minute, Backoff: 10 * time.Millisecond,
			}, h, e.log)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})

			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				agg.Record(domain.ReadEvent{ArticleID: arts[i%len(arts)]})
				if (i+1)%perFlush == 0 || i == b.N-1 {
					if err := agg.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			go func() { defer close(done); _ = c.Run(ctx) }()
			deadline := start.Add(5 * time.Minute)
			for e.pgTotal(b) < int64(b.N) {
				if time.Now().After(deadline) {
					b.Fatalf("only %d of %d reads counted after 5 minutes", e.pgTotal(b), b.N)
				}
				time.Sleep(time.Millisecond)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			cancel()
			<-done
			if total := e.pgTotal(b); total != int64(b.N) {
				b.Fatalf("PostgreSQL counted %d reads, want %d", total, b.N)
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/read")
			b.ReportMetric(float64(agg.Stats.Batches.Load()), "entries")
		})
	}
}
