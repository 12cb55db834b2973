package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// ackTTL bounds how long an unread acknowledgement stream or list stays in Redis.
const ackTTL = 10 * time.Second

// publishAcked is publish for a change that must have reached every instance before the write
// answers: the message names a stream, every subscription that receives it (this instance's own
// too) adds its id to that stream once it has dropped the keys, and publishAcked waits for as
// many acknowledgements as PUBLISH said it delivered to, for at most wait. It reports whether all
// of them came; false also when the PUBLISH failed. A nil Broadcaster has no one to tell: true.
//
// The wait is XREAD's BLOCK, which Redis keeps to the millisecond. (It was BLPOP, whose timeout
// go-redis sends in whole seconds: every wait under a second became one second, and go-redis
// logged a warning for each, several per write.)
//
// An instance of an older version acknowledges on the list the message also names, which no
// blocking read here watches: its acknowledgements are counted when the stream's wait is over,
// so during a rolling upgrade a write waits out wait whenever such an instance is subscribed.
//
// An instance Redis does not count (its subscription is gone) receives nothing, and its tiers go
// off as soon as it notices; one that Redis counts but that does not answer in time (stalled,
// partitioned) is covered by the caller, which then waits for whatever such an instance may hold
// to expire.
func (b *Broadcaster) publishAcked(keys []string, wait time.Duration) bool {
	if b == nil {
		return true
	}
	b.changes.Add(1) // as publish
	token := newToken()
	acks, legacy := b.channel+":acks:"+token, b.channel+":ack:"+token
	raw, _ := json.Marshal(invalidation{V: invalidationVersion, From: b.id, Keys: keys, AckStream: acks, Ack: legacy}) // strings only: it cannot fail
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout+wait)
	defer cancel()
	receivers, err := b.rdb.Publish(ctx, b.channel, raw).Result()
	if err != nil {
		b.Stats.PublishFailed.Add(1)
		b.log.Warn("acknowledged cache invalidation not broadcast", "channel", b.channel, "keys", len(keys), "err", err)
		return false
	}
	b.Stats.Published.Add(1)
	defer b.rdb.Del(context.WithoutCancel(ctx), acks)
	deadline := time.Now().Add(wait)
	got, after := int64(0), "0"
	for got < receivers {
		// Whole milliseconds, what BLOCK takes; 0 would block for ever.
		left := time.Until(deadline).Truncate(time.Millisecond)
		if left <= 0 {
			break
		}
		streams, err := b.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{acks, after}, Count: receivers - got, Block: left}).Result()
		if errors.Is(err, redis.Nil) {
			break // the wait is over
		}
		if err != nil {
			b.log.Warn("waiting for cache invalidation acknowledgements failed", "channel", b.channel, "err", err)
			return false
		}
		for _, st := range streams {
			for _, m := range st.Messages {
				after = m.ID
				if err := checkAck(m.Values); err != nil {
					// Not an acknowledgement this release can vouch for: whoever sent it is not
					// counted, so the caller falls back as for an instance that did not answer.
					b.log.Warn("unreadable cache invalidation acknowledgement", "channel", b.channel, "err", err)
					continue
				}
				got++
			}
		}
	}
	if got >= receivers {
		return true
	}
	older, err := b.rdb.LLen(ctx, legacy).Result()
	return err == nil && got+older >= receivers
}

// ackVersion is the schema version of an acknowledgement entry (domain.MessageVersion): the
// stream entry's fields "v" and "from" (the acknowledging instance). An entry without "v" is
// version 0. Publishers of v0.1.0 name only a list, onto which a bare instance id is pushed: they
// count what they pop and read nothing of it.
const ackVersion domain.MessageVersion = 1

// checkAck reports whether the fields of an acknowledgement entry are of this release or the one
// before it.
func checkAck(fields map[string]any) error {
	v := domain.MessageVersion(0)
	if raw, ok := fields["v"].(string); ok {
		n, err := strconv.Atoi(raw)
		if err != nil {
			return fmt.Errorf("acknowledgement version %q: %w", raw, err)
		}
		v = domain.MessageVersion(n)
	}
	if from, _ := fields["from"].(string); from == "" || !ackVersion.Reads(v) {
		return fmt.Errorf("acknowledgement %v: not of a version this release reads", fields)
	}
	return nil
}

// acknowledge tells the publisher of an acknowledged message that this instance has applied it:
// on the stream it named, or on the list of a publisher of an older version.
func (b *Broadcaster) acknowledge(m invalidation) {
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if m.AckStream != "" {
			p.XAdd(ctx, &redis.XAddArgs{Stream: m.AckStream, Values: []string{"v", strconv.Itoa(int(ackVersion)), "from", b.id}})
			p.PExpire(ctx, m.AckStream, ackTTL)
			return nil
		}
		p.RPush(ctx, m.Ack, b.id)
		p.PExpire(ctx, m.Ack, ackTTL)
		return nil
	})
	if err != nil {
		b.log.Warn("cache invalidation not acknowledged: its publisher waits for it to time out", "channel", b.channel, "err", err)
	}
}
