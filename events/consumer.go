package events

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/codes"

	"github.com/inkwell-dev/inkwell/domain"
)

// Handler processes one batch of stream entries. Returning nil lets the consumer acknowledge the
// whole batch; an error leaves it pending, to be reclaimed and retried. Handlers must therefore be
// idempotent (the read consumers dedupe through the inbox table).
type Handler func(ctx context.Context, msgs []Message) error

// ConsumerConfig configures one consumer of one consumer group.
type ConsumerConfig struct {
	Stream    string
	Group     string
	Name      string        // this consumer's name within the group; unique per process
	BatchSize int           // at most this many entries per batch
	BatchWait time.Duration // a partial batch is handed over after this long
	// ClaimIdle is how long an entry must sit unacknowledged before another consumer takes it
	// over with XAUTOCLAIM; ClaimEvery is how often this consumer looks for such entries.
	ClaimIdle  time.Duration
	ClaimEvery time.Duration
	// Backoff is the pause after a failed read or batch, so an outage is not a busy loop.
	Backoff time.Duration
	// Retry.MaxAttempts bounds the deliveries of an entry (0: no bound; redelivery is paced by
	// ClaimIdle, so Base and Max are unused). A reclaimed entry that Redis has delivered more
	// often than this is handed to the handler once more, alone, so a batch
	// that fails because of one entry does not take the others with it; if it fails alone too,
	// it is moved to the dead-letter stream (DeadLetterStream) and acknowledged.
	Retry domain.RetryPolicy
}

// deadLetterMaxLen is the approximate length a dead-letter stream is trimmed to: it is for an
// operator's inspection, not a second queue.
const deadLetterMaxLen = 10000

// DeadLetterStream is the stream entries of stream that ran out of deliveries are moved to.
func DeadLetterStream(stream string) string { return stream + ":dead" }

// ConsumerStats counts a consumer's work. Values only grow.
type ConsumerStats struct {
	Batches, Entries, Acked, Reclaimed, Failures, DeadLettered atomic.Int64
}

// Consumer reads a stream through a consumer group in batches and acknowledges what its handler
// processed.
type Consumer struct {
	rdb    redis.UniversalClient
	cfg    ConsumerConfig
	handle Handler
	log    *slog.Logger
	Stats  ConsumerStats
}

// NewConsumer returns a consumer; call Run to start it.
func NewConsumer(rdb redis.UniversalClient, cfg ConsumerConfig, handle Handler, log *slog.Logger) *Consumer {
	if cfg.BatchSize < 1 {
		cfg.BatchSize = 1
	}
	if cfg.BatchWait <= 0 {
		cfg.BatchWait = 100 * time.Millisecond
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	return &Consumer{rdb: rdb, cfg: cfg, handle: handle, log: log.With("stream", cfg.Stream, "group", cfg.Group, "consumer", cfg.Name)}
}

// Run consumes until ctx ends. Errors from Redis or the handler are logged and retried after a
// pause; Run returns only when ctx is done.
func (c *Consumer) Run(ctx context.Context) error {
	var lastClaim time.Time
	for ctx.Err() == nil {
		if err := c.ensureGroup(ctx); err != nil {
			c.pause(ctx, "create consumer group", err)
			continue
		}
		if time.Since(lastClaim) >= c.cfg.ClaimEvery {
			if err := c.reclaim(ctx); err != nil {
				c.pause(ctx, "reclaim pending entries", err)
				continue
			}
			lastClaim = time.Now()
		}
		msgs, err := c.readBatch(ctx)
		if err != nil {
			c.pause(ctx, "read stream", err)
			continue
		}
		if len(msgs) > 0 {
			c.process(ctx, msgs)
		}
	}
	return nil
}

// Once runs one round of Run by hand (tests and tools): it takes over every entry pending longer
// than ClaimIdle, then reads and handles one batch of new entries. It returns the first error.
func (c *Consumer) Once(ctx context.Context) error {
	if err := c.ensureGroup(ctx); err != nil {
		return err
	}
	if err := c.reclaim(ctx); err != nil {
		return err
	}
	msgs, err := c.readBatch(ctx)
	if err != nil {
		return err
	}
	if len(msgs) > 0 {
		c.process(ctx, msgs)
	}
	return nil
}

// ensureGroup creates the group (and the stream) once; a group created later than the stream
// still starts from the stream's beginning, so no event written before the first start is missed.
func (c *Consumer) ensureGroup(ctx context.Context) error {
	err := c.rdb.XGroupCreateMkStream(ctx, c.cfg.Stream, c.cfg.Group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

// readBatch collects up to BatchSize new entries, waiting at most BatchWait for a batch to fill.
// BLOCK takes a time.Duration; go-redis extends the connection's read deadline by the block time,
// so a long block never trips the client's read timeout.
func (c *Consumer) readBatch(ctx context.Context) ([]Message, error) {
	deadline := time.Now().Add(c.cfg.BatchWait)
	var out []Message
	for len(out) < c.cfg.BatchSize {
		wait := time.Until(deadline)
		if wait < time.Millisecond {
			break
		}
		res, err := c.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: c.cfg.Group, Consumer: c.cfg.Name, Streams: []string{c.cfg.Stream, ">"},
			Count: int64(c.cfg.BatchSize - len(out)), Block: wait,
		}).Result()
		if errors.Is(err, redis.Nil) {
			break
		}
		if err != nil {
			if len(out) > 0 && ctx.Err() == nil {
				break // hand over what we have; the error will show again on the next read
			}
			return out, err
		}
		for _, s := range res {
			out = append(out, messagesOf(s.Messages)...)
		}
	}
	return out, nil
}

// reclaim takes over entries other consumers (or an earlier life of this one) read but never
// acknowledged, and processes them again.
func (c *Consumer) reclaim(ctx context.Context) error {
	start := "0-0"
	for {
		claimed, next, err := c.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: c.cfg.Stream, Group: c.cfg.Group, Consumer: c.cfg.Name,
			MinIdle: c.cfg.ClaimIdle, Start: start, Count: int64(c.cfg.BatchSize),
		}).Result()
		if err != nil {
			return err
		}
		msgs := messagesOf(claimed)
		if len(msgs) > 0 {
			c.Stats.Reclaimed.Add(int64(len(msgs)))
			c.log.InfoContext(ctx, "reclaimed pending entries", "entries", len(msgs))
			fresh, spent, err := c.splitSpent(ctx, msgs)
			if err != nil {
				return err
			}
			for _, s := range spent {
				if !c.lastTry(ctx, s) {
					return nil
				}
			}
			if len(fresh) > 0 && !c.process(ctx, fresh) {
				return nil
			}
		}
		if next == "0-0" || next == "" {
			return nil
		}
		start = next
	}
}

// spentEntry is a reclaimed entry delivered more often than Retry.MaxAttempts.
type spentEntry struct {
	msg        Message
	deliveries int64
}

// splitSpent separates the reclaimed entries that have deliveries left from those that have
// none, by the delivery counts in the group's pending list (XAUTOCLAIM counted this delivery).
func (c *Consumer) splitSpent(ctx context.Context, msgs []Message) ([]Message, []spentEntry, error) {
	if c.cfg.Retry.MaxAttempts <= 0 {
		return msgs, nil, nil
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.XPendingExtCmd, len(msgs))
	for i, m := range msgs {
		cmds[i] = pipe.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: c.cfg.Stream, Group: c.cfg.Group, Start: m.ID, End: m.ID, Count: 1})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, err
	}
	fresh := msgs[:0:0]
	var spent []spentEntry
	for i, m := range msgs {
		p := cmds[i].Val()
		// RetryCount counts this delivery: the ones before it all failed.
		if len(p) == 1 && c.cfg.Retry.Exhausted(int(p[0].RetryCount-1)) {
			spent = append(spent, spentEntry{msg: m, deliveries: p[0].RetryCount})
			continue
		}
		fresh = append(fresh, m)
	}
	return fresh, spent, nil
}

// lastTry hands an entry that ran out of deliveries to the handler alone; if that fails too, the
// entry goes to the dead-letter stream and is acknowledged, instead of being retried for ever.
// It returns false when Redis failed (the entry stays pending for a later reclaim).
func (c *Consumer) lastTry(ctx context.Context, s spentEntry) bool {
	c.Stats.Batches.Add(1)
	c.Stats.Entries.Add(1)
	herr := c.handleInSpan(ctx, []Message{s.msg})
	if herr == nil {
		return c.ack(ctx, []string{s.msg.ID})
	}
	if ctx.Err() != nil {
		return false
	}
	values := make(map[string]any, len(s.msg.Values)+4)
	for k, v := range s.msg.Values {
		values[k] = v
	}
	values["dead_entry"] = s.msg.ID
	values["dead_group"] = c.cfg.Group
	values["dead_deliveries"] = s.deliveries
	values["dead_error"] = herr.Error()
	if err := c.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: DeadLetterStream(c.cfg.Stream), MaxLen: deadLetterMaxLen, Approx: true, Values: values,
	}).Err(); err != nil {
		c.pause(ctx, "move an entry to the dead-letter stream", err)
		return false
	}
	if !c.ack(ctx, []string{s.msg.ID}) {
		return false
	}
	c.Stats.DeadLettered.Add(1)
	c.log.ErrorContext(ctx, "stream entry ran out of deliveries; moved to the dead-letter stream",
		"entry", s.msg.ID, "deliveries", s.deliveries, "dead_stream", DeadLetterStream(c.cfg.Stream), "err", herr)
	return true
}

// process hands a batch to the handler and acknowledges it on success.
func (c *Consumer) process(ctx context.Context, msgs []Message) bool {
	c.Stats.Batches.Add(1)
	c.Stats.Entries.Add(int64(len(msgs)))
	if err := c.handleInSpan(ctx, msgs); err != nil {
		c.Stats.Failures.Add(1)
		c.pause(ctx, "handle batch (left pending for retry)", err)
		return false
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return c.ack(ctx, ids)
}

// handleInSpan runs the handler on a batch inside the batch's span (the pause after a failure
// and the acknowledgement stay outside it).
func (c *Consumer) handleInSpan(ctx context.Context, msgs []Message) error {
	ctx, span := c.startBatch(ctx, msgs)
	defer span.End()
	err := c.handle(ctx, msgs)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// ack acknowledges handled entries.
func (c *Consumer) ack(ctx context.Context, ids []string) bool {
	if err := c.rdb.XAck(ctx, c.cfg.Stream, c.cfg.Group, ids...).Err(); err != nil {
		// The effect is committed; the entries stay pending and a later reclaim re-delivers them,
		// which the handler's dedupe turns into a no-op.
		c.pause(ctx, "acknowledge batch", err)
		return false
	}
	c.Stats.Acked.Add(int64(len(ids)))
	return true
}

func (c *Consumer) pause(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	c.log.WarnContext(ctx, "stream consumer: "+what+" failed", "err", err)
	t := time.NewTimer(c.cfg.Backoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Group is the consumer group this consumer belongs to.
func (c *Consumer) Group() string { return c.cfg.Group }
