package events_test

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

// BenchmarkReadAggregatorRecord is the request path's share of an anonymous read: one Record
// from many goroutines at once (RunParallel), on one hot article and spread over 1,000. Nothing
// flushes (no Redis is needed), so the tally grows to its steady size and stays there.
//
//	go test -run '^$' -bench BenchmarkReadAggregatorRecord -benchmem ./events/
func BenchmarkReadAggregatorRecord(b *testing.B) {
	for _, bc := range []struct {
		name     string
		articles int64
	}{{"one-article", 1}, {"1000-articles", 1000}} {
		b.Run(bc.name, func(b *testing.B) {
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			agg := events.NewReadAggregator(nil, events.AggregatorConfig{FlushAt: 1 << 40}, nil, log)
			var seq atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := seq.Add(1_000_003)
				for pb.Next() {
					i++
					agg.Record(domain.ReadEvent{ArticleID: i%bc.articles + 1})
				}
			})
		})
	}
}
