package events

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// AggregatorConfig sizes the in-process aggregation of anonymous reads.
type AggregatorConfig struct {
	Stream     string        // the read-event stream
	FlushEvery time.Duration // the tally is sent at least this often
	FlushAt    int           // ... and as soon as about this many reads wait (a memory bound)
	EntryMax   int           // articles per stream entry; each entry is one batch with its own id
	RetryMax   int           // batches kept for the next flush after a failed write; beyond, they are lost
	// Ticks, when set, drives the periodic flush instead of a ticker of FlushEvery (tests).
	Ticks <-chan time.Time
}

// AggregatorStats counts what happened to anonymous reads. Values only grow.
type AggregatorStats struct {
	Counted atomic.Int64 // reads taken from the tally into batches
	Sent    atomic.Int64 // reads written to the stream (inside batches)
	Batches atomic.Int64 // batch entries written to the stream
	Retried atomic.Int64 // batch writes that failed and were kept for the next flush
	Lost    atomic.Int64 // reads whose batch could not be written (retries exhausted, or at shutdown)
}

// ReadAggregator is the ReadRecorder of the request path. A signed-in read goes on to the
// Publisher as its own event (it feeds the reader's history), unless it repeats its reader's
// latest event in this flush interval, which only counts as anonymous reads do. An anonymous read only counts: it
// adds one to a per-article tally in process, a few tens of nanoseconds and no allocation. Run
// sends the tally every FlushEvery (or when FlushAt reads wait) as batches: one stream entry of
// up to EntryMax (article, reads) pairs under one random batch id, which the read-count consumer
// records in its inbox, so a redelivered batch counts once. A crash loses at most the reads of
// one flush interval (plus batches waiting for a retry); reads are best-effort by design.
type ReadAggregator struct {
	rdb      redis.UniversalClient
	cfg      AggregatorConfig
	signedIn *Publisher
	log      *slog.Logger
	tally    *tally
	window   *historyWindow // each signed-in reader's latest article sent since the last flush
	stripe   int            // reads in one stripe that ask for an early flush
	full     chan struct{}  // an early flush is wanted

	mu    sync.Mutex // one flush at a time; guards sums and retry
	sums  map[int64]int64
	retry []readBatch

	Stats AggregatorStats
}

// readBatch is one stream entry of aggregated reads.
type readBatch struct {
	id     string
	counts string // "article:reads,article:reads"
	reads  int64
}

// NewReadAggregator returns the aggregator; signed-in reads go to pub. Call Run to start sending.
func NewReadAggregator(rdb redis.UniversalClient, cfg AggregatorConfig, pub *Publisher, log *slog.Logger) *ReadAggregator {
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = 100 * time.Millisecond
	}
	if cfg.FlushAt < 1 {
		cfg.FlushAt = 10000
	}
	if cfg.EntryMax < 1 {
		cfg.EntryMax = 500
	}
	if cfg.RetryMax < 0 {
		cfg.RetryMax = 0
	}
	return &ReadAggregator{
		rdb: rdb, cfg: cfg, signedIn: pub, log: log, tally: newTally(), window: newHistoryWindow(historyWindowReaders),
		stripe: max(1, cfg.FlushAt/tallyShards), full: make(chan struct{}, 1), sums: make(map[int64]int64),
	}
}

// historyWindowReaders bounds the readers one flush interval remembers.
const historyWindowReaders = 1 << 16

// Record counts ev. It never blocks on I/O and never fails. A signed-in read goes on as its own
// event unless its reader's latest event in this flush interval was of the same article: that
// repeat only counts (it would move the history's latest read time by less than the interval and
// change no order; historyWindow).
func (a *ReadAggregator) Record(ev domain.ReadEvent) {
	if ev.UserID != 0 && a.window.sends(ev.UserID, ev.ArticleID) {
		a.signedIn.Record(ev)
		return
	}
	if a.tally.add(ev.ArticleID, a.stripe) {
		select {
		case a.full <- struct{}{}:
		default:
		}
	}
}

// Run flushes every FlushEvery (and early when the tally fills) until ctx ends, then flushes one
// last time (bounded by a short timeout), so reads served before shutdown are sent.
func (a *ReadAggregator) Run(ctx context.Context) error {
	ticks := a.cfg.Ticks
	if ticks == nil {
		t := time.NewTicker(a.cfg.FlushEvery)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			_ = a.flush(fctx, true)
			return nil
		case <-ticks:
		case <-a.full:
		}
		_ = a.flush(ctx, false)
	}
}

// Flush sends what the tally holds now (and the batches waiting for a retry); Run calls it. A
// failed batch is kept, under its id, for the next flush, as long as RetryMax allows.
func (a *ReadAggregator) Flush(ctx context.Context) error { return a.flush(ctx, false) }

func (a *ReadAggregator) flush(ctx context.Context, final bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tally.drain(a.sums)
	a.window.reset()
	batches := append(a.retry, a.batches()...)
	a.retry = nil
	clear(a.sums)
	if len(batches) == 0 {
		return nil
	}
	cmds := make([]*redis.StringCmd, len(batches))
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, b := range batches {
			cmds[i] = pipe.XAdd(ctx, &redis.XAddArgs{Stream: a.cfg.Stream, Values: []any{"v", ReadEntryVersion.String(), "id", b.id, "counts", b.counts}})
		}
		return nil
	})
	var errs []error
	var lost int64
	for i, b := range batches {
		err := cmds[i].Err()
		switch {
		case err == nil:
			a.Stats.Sent.Add(b.reads)
			a.Stats.Batches.Add(1)
			continue
		case !final && len(a.retry) < a.cfg.RetryMax:
			// Same id on retry: had the failed write reached the stream after all, the inbox
			// counts the batch once.
			a.retry = append(a.retry, b)
			a.Stats.Retried.Add(1)
		default:
			a.Stats.Lost.Add(b.reads)
			lost += b.reads
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	a.log.WarnContext(ctx, "read counts not sent: stream write failed", "batches", len(errs), "kept", len(a.retry), "lost_reads", lost, "err", errs[0])
	return err
}

// batches turns the sums into stream entries of at most EntryMax articles, each under a new id.
func (a *ReadAggregator) batches() []readBatch {
	var out []readBatch
	var sb strings.Builder
	var cur readBatch
	n := 0
	emit := func() {
		cur.id, cur.counts = domain.NewEventID(), sb.String()
		out = append(out, cur)
		a.Stats.Counted.Add(cur.reads)
		cur, n = readBatch{}, 0
		sb.Reset()
	}
	var buf [40]byte
	for article, reads := range a.sums {
		if n > 0 {
			sb.WriteByte(',')
		}
		b := strconv.AppendInt(buf[:0], article, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, reads, 10)
		sb.Write(b)
		cur.reads += reads
		if n++; n == a.cfg.EntryMax {
			emit()
		}
	}
	if n > 0 {
		emit()
	}
	return out
}

// decodeCounts parses an aggregated entry's "counts" into one event per article, all under id.
func decodeCounts(id, counts string, into []domain.ReadEvent) ([]domain.ReadEvent, bool) {
	if id == "" || counts == "" {
		return into, false
	}
	start := len(into)
	for pair := range strings.SplitSeq(counts, ",") {
		as, rs, ok := strings.Cut(pair, ":")
		article, err1 := strconv.ParseInt(as, 10, 64)
		reads, err2 := strconv.ParseInt(rs, 10, 64)
		if !ok || err1 != nil || err2 != nil || article <= 0 || reads <= 0 {
			return into[:start], false
		}
		into = append(into, domain.ReadEvent{ID: id, ArticleID: article, Count: reads})
	}
	return into, true
}

// DecodeReadEntry appends the read events of one stream entry to into: one event for an entry
// the Publisher wrote, one per article for a batch the ReadAggregator wrote, of this release or
// the one before it. ok is false (and into unchanged) when the entry cannot be parsed.
func DecodeReadEntry(values map[string]any, into []domain.ReadEvent) (_ []domain.ReadEvent, ok bool) {
	if counts, isBatch := values["counts"].(string); isBatch {
		if !readableEntry(values) {
			return into, false
		}
		id, _ := values["id"].(string)
		return decodeCounts(id, counts, into)
	}
	ev, ok := DecodeReadEvent(values)
	if !ok {
		return into, false
	}
	return append(into, ev), true
}
