package events

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// PublisherConfig sizes the read-event publisher.
type PublisherConfig struct {
	Stream     string        // stream key
	Buffer     int           // events held in memory waiting to be sent; beyond it, events are dropped
	BatchSize  int           // events sent in one pipelined round trip
	FlushEvery time.Duration // a partial batch waits at most this long
}

// PublisherStats counts what happened to recorded events. Values only grow.
type PublisherStats struct {
	Published atomic.Int64 // written to the stream
	Dropped   atomic.Int64 // refused because the buffer was full
	Failed    atomic.Int64 // lost because Redis refused the batch
}

// Publisher hands read events from the request path to a Redis stream. Record never blocks and
// never fails: a full buffer drops the event (and counts it), and a Redis outage loses the batch
// in flight (and counts it) but the reads that produced them still succeed. Run sends the
// buffered events in batches of pipelined XADDs.
type Publisher struct {
	rdb   redis.UniversalClient
	cfg   PublisherConfig
	log   *slog.Logger
	buf   chan domain.ReadEvent
	Stats PublisherStats
}

// NewPublisher returns a publisher; call Run to start sending.
func NewPublisher(rdb redis.UniversalClient, cfg PublisherConfig, log *slog.Logger) *Publisher {
	if cfg.Buffer < 1 {
		cfg.Buffer = 1
	}
	if cfg.BatchSize < 1 {
		cfg.BatchSize = 1
	}
	return &Publisher{rdb: rdb, cfg: cfg, log: log, buf: make(chan domain.ReadEvent, cfg.Buffer)}
}

// Record queues ev for publishing, or drops it when the buffer is full.
func (p *Publisher) Record(ev domain.ReadEvent) {
	select {
	case p.buf <- ev:
	default:
		p.Stats.Dropped.Add(1)
	}
}

// Run sends batches until ctx ends, then flushes what is buffered (bounded by a short timeout).
func (p *Publisher) Run(ctx context.Context) error {
	batch := make([]domain.ReadEvent, 0, p.cfg.BatchSize)
	timer := time.NewTimer(p.cfg.FlushEvery)
	defer timer.Stop()
	flush := func(ctx context.Context) {
		if len(batch) > 0 {
			p.send(ctx, batch)
			batch = batch[:0]
		}
	}
	for {
		select {
		case ev := <-p.buf:
			batch = append(batch, ev)
			if len(batch) >= p.cfg.BatchSize {
				flush(ctx)
			}
		case <-timer.C:
			flush(ctx)
			timer.Reset(p.cfg.FlushEvery)
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			for {
				select {
				case ev := <-p.buf:
					batch = append(batch, ev)
					if len(batch) >= p.cfg.BatchSize {
						flush(fctx)
					}
				default:
					flush(fctx)
					return nil
				}
			}
		}
	}
}

func (p *Publisher) send(ctx context.Context, batch []domain.ReadEvent) {
	_, err := p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, ev := range batch {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: p.cfg.Stream, Values: encode(ev)})
		}
		return nil
	})
	if err != nil {
		p.Stats.Failed.Add(int64(len(batch)))
		p.log.WarnContext(ctx, "read events lost: stream write failed", "events", len(batch), "err", err)
		return
	}
	p.Stats.Published.Add(int64(len(batch)))
}

// ReadEntryVersion is the schema version of the read stream's entries (domain.MessageVersion),
// single reads ("v", "id", "article", "user", "at") and batches of anonymous reads ("v", "id",
// "counts") alike. Version 1 added "v"; version 0 is the same fields without it.
const ReadEntryVersion domain.MessageVersion = 1

func encode(ev domain.ReadEvent) []any {
	return []any{
		"v", ReadEntryVersion.String(),
		"id", ev.ID,
		"article", strconv.FormatInt(ev.ArticleID, 10),
		"user", strconv.FormatInt(ev.UserID, 10),
		"at", strconv.FormatInt(ev.At.UnixMicro(), 10),
	}
}

// DecodeReadEvent parses a stream entry written by the publisher, of this release or the one
// before it.
func DecodeReadEvent(values map[string]any) (domain.ReadEvent, bool) {
	if !readableEntry(values) {
		return domain.ReadEvent{}, false
	}
	str := func(k string) string { s, _ := values[k].(string); return s }
	article, err1 := strconv.ParseInt(str("article"), 10, 64)
	user, err2 := strconv.ParseInt(str("user"), 10, 64)
	at, err3 := strconv.ParseInt(str("at"), 10, 64)
	id := str("id")
	if err1 != nil || err2 != nil || err3 != nil || id == "" || article <= 0 || user < 0 {
		return domain.ReadEvent{}, false
	}
	return domain.ReadEvent{ID: id, ArticleID: article, UserID: user, At: time.UnixMicro(at).UTC()}, true
}

// readableEntry reports whether a read stream entry's version is one this release reads.
func readableEntry(values map[string]any) bool {
	field, _ := values["v"].(string)
	v, ok := domain.ParseMessageVersion(field)
	return ok && ReadEntryVersion.Reads(v)
}
