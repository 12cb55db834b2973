package cache

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// BroadcastTuning is what the Broadcaster's tests set: short timings, and hooks that tell them
// when the subscription goroutine has done something (instead of sleeping until it probably has).
type BroadcastTuning struct {
	PingEvery, PingTimeout time.Duration                   // zero: the defaults
	BeforeSubscribe        func(ctx context.Context) error // before each subscription attempt
	Received               func(keys []string, own bool)   // after a message was handled (keys nil: it was unreadable)
	State                  func(subscribed bool)           // after each change of state
}

// NewTunedBroadcaster is NewBroadcaster with tu applied.
func NewTunedBroadcaster(rdb redis.UniversalClient, ks Keyspace, log *slog.Logger, tu BroadcastTuning) (*Broadcaster, func()) {
	o := defaultBroadcastOptions()
	if tu.PingEvery > 0 {
		o.pingEvery = tu.PingEvery
	}
	if tu.PingTimeout > 0 {
		o.pingTimeout = tu.PingTimeout
	}
	o.minBackoff = 10 * time.Millisecond
	o.beforeSubscribe, o.received, o.state = tu.BeforeSubscribe, tu.Received, tu.State
	return newBroadcaster(rdb, ks, log, o)
}

// SetRevocationsClock makes r read time from now, for its memory's expiries too.
func SetRevocationsClock(r *Revocations, now func() time.Time) {
	r.now = now
	r.notRevoked.now = now
}

// Acquire takes a fallback slot as a fallback load does.
func (l *FallbackLimit) Acquire(ctx context.Context) (func(), error) { return l.acquire(ctx) }

// PublishAcked is publishAcked: keys published as a change every receiver acknowledges (as a
// revocation's), and whether all of them did within wait.
func (b *Broadcaster) PublishAcked(keys []string, wait time.Duration) bool {
	return b.publishAcked(keys, wait)
}

// NewTunedRepairer is NewRepairer retrying every 10 ms (up to 50 ms), calling round after each
// round with what it left behind.
func NewTunedRepairer(log *slog.Logger, round func(left int)) (*Repairer, func()) {
	return newRepairer(log, repairOptions{minBackoff: 10 * time.Millisecond, maxBackoff: 50 * time.Millisecond, round: round})
}

// AcknowledgeOn adds this instance's acknowledgement to stream, as a receiver of a message
// naming it does.
func (b *Broadcaster) AcknowledgeOn(stream string) { b.acknowledge(invalidation{AckStream: stream}) }

// RepairInFlight makes key's invalidation one a repair has taken and is still writing, as the
// repairer does between take and settle; done ends it without writing anything.
func (c *AuthorPageCache) RepairInFlight(key string) (done func()) {
	c.repair.add(key)
	keys := c.repair.take()
	return func() { c.repair.settle(keys) }
}

// RepairInFlight is AuthorPageCache.RepairInFlight for a read-through cache.
func (c *ReadThrough[V]) RepairInFlight(key string) (done func()) {
	c.repair.add(key)
	keys := c.repair.take()
	return func() { c.repair.settle(keys) }
}

// SetChangesClock makes c read time from now.
func SetChangesClock(c *Changes, now func() time.Time) { c.now = now }
