package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// ackTTL bounds how long an unread acknowledgement list stays in Redis.
const ackTTL = 10 * time.Second

// publishAcked is publish for a change that must have reached every instance before the write
// answers: the message names a list, every subscription that receives it (this instance's own
// too) pushes an acknowledgement naming itself onto that list once it has dropped the keys, and publishAcked waits for as
// many acknowledgements as PUBLISH said it delivered to, for at most wait. It reports whether all
// of them came; false also when the PUBLISH failed. A nil Broadcaster has no one to tell: true.
//
// An instance Redis does not count (its subscription is gone) receives nothing, and its tiers go
// off as soon as it notices; one that Redis counts but that does not answer in time (stalled,
// partitioned) is covered by the caller, which then waits for whatever such an instance may hold
// to expire.
func (b *Broadcaster) publishAcked(keys []string, wait time.Duration) bool {
	if b == nil {
		return true
	}
	ack := b.channel + ":ack:" + newToken()
	raw, _ := json.Marshal(invalidation{V: invalidationVersion, From: b.id, Keys: keys, Ack: ack}) // strings only: it cannot fail
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout+wait)
	defer cancel()
	receivers, err := b.rdb.Publish(ctx, b.channel, raw).Result()
	if err != nil {
		b.Stats.PublishFailed.Add(1)
		b.log.Warn("acknowledged cache invalidation not broadcast", "channel", b.channel, "keys", len(keys), "err", err)
		return false
	}
	b.Stats.Published.Add(1)
	defer b.rdb.Del(context.WithoutCancel(ctx), ack)
	deadline := time.Now().Add(wait)
	for got := int64(0); got < receivers; {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		// BLPOP's timeout has a resolution of a millisecond; 0 would block forever.
		popped, err := b.rdb.BLPop(ctx, max(left, time.Millisecond), ack).Result()
		if err != nil {
			if !errors.Is(err, redis.Nil) {
				b.log.Warn("waiting for cache invalidation acknowledgements failed", "channel", b.channel, "err", err)
			}
			return false
		}
		if err := checkAck(popped[1]); err != nil {
			// Not an acknowledgement this release can vouch for: whoever sent it is not counted,
			// so the caller falls back as for an instance that did not answer.
			b.log.Warn("unreadable cache invalidation acknowledgement", "channel", b.channel, "err", err)
			continue
		}
		got++
	}
	return true
}

// ackVersion is the schema version of an acknowledgement (domain.MessageVersion): JSON
// {"v":1,"from":"<instance id>"}. Version 0, from before versions, is the bare instance id.
const ackVersion domain.MessageVersion = 1

// acknowledgement is what a receiver of an acknowledged message pushes onto its list.
type acknowledgement struct {
	V    domain.MessageVersion `json:"v"`
	From string                `json:"from"` // the acknowledging instance
}

// checkAck reports whether raw is an acknowledgement of this release or the one before it.
func checkAck(raw string) error {
	a := acknowledgement{}
	if strings.HasPrefix(raw, "{") {
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			return fmt.Errorf("acknowledgement %q: %w", raw, err)
		}
	} else {
		a.From = raw // version 0: the bare instance id (hex, never "{")
	}
	if !ackVersion.Reads(a.V) || a.From == "" {
		return fmt.Errorf("acknowledgement %q: not of a version this release reads", raw)
	}
	return nil
}

// acknowledge tells the publisher of an acknowledged message that this instance has applied it.
func (b *Broadcaster) acknowledge(list string) {
	raw, _ := json.Marshal(acknowledgement{V: ackVersion, From: b.id}) // strings only: it cannot fail
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, list, raw)
		p.PExpire(ctx, list, ackTTL)
		return nil
	})
	if err != nil {
		b.log.Warn("cache invalidation not acknowledged: its publisher waits for it to time out", "channel", b.channel, "err", err)
	}
}
