package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// Broadcaster keeps the in-process tiers of every instance coherent with the changes any instance
// makes. Every change a readThrough of this process makes to cached keys (changed) is published
// on one Redis pub/sub channel, once Redis has it and before the write's answer is sent; every
// instance subscribes and drops the keys it receives from each of its in-process tiers.
//
// A tier is only as good as the subscription in front of it: while the subscription is not
// confirmed (not yet subscribed, broken, reconnecting, or a ping through it unanswered for
// pingTimeout) the tiers are not used at all, reads go to Redis, which is correct, only slower.
// When the subscription is confirmed again every tier is flushed first (messages may have been
// missed meanwhile), then used again. A failed PUBLISH does not fail the write: it is logged and
// counted, and the other instances' copies expire within their LocalTTL.
//
// A nil *Broadcaster publishes nothing and trusts the tiers (a process on its own, a test).
type Broadcaster struct {
	rdb     redis.UniversalClient
	channel string
	id      string // this instance's, in every message it publishes, so it skips its own
	log     *slog.Logger
	opts    broadcastOptions

	subscribed atomic.Bool // read on every read of a tier: keep it one atomic load
	downSince  time.Time   // when the tiers went off (only the subscription goroutine uses it)

	lastPublishWarn atomic.Int64 // unix nanoseconds of the last logged publish failure

	// changes counts the changes this instance published, the ones it received and its flushes
	// (see Changes): memos of documents built from cached data compare it.
	changes atomic.Uint64

	tiersMu sync.Mutex
	tiers   []tier

	psMu    sync.Mutex
	ps      *redis.PubSub // the current subscription, closed by stop to end a blocked receive
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}

	Stats BroadcastStats
}

// BroadcastStats counts what a Broadcaster did. Values only grow.
type BroadcastStats struct {
	Published      atomic.Int64 // messages published (one per change, however many keys)
	PublishFailed  atomic.Int64 // publishes that failed: other instances keep their copies until LocalTTL
	Received       atomic.Int64 // messages from other instances applied to the tiers
	Subscriptions  atomic.Int64 // times the subscription was confirmed (the first time and every resubscription)
	Losses         atomic.Int64 // times a confirmed subscription was lost
	Flushes        atomic.Int64 // times every tier was emptied (each confirmation, each unreadable message)
	UnreadableMsgs atomic.Int64 // messages that could not be decoded (each flushes the tiers)
}

// tier is an in-process tier a received key is dropped from.
type tier interface {
	delete(keys ...string)
	flush()
}

// invalidationVersion is the schema version of the channel's messages (domain.MessageVersion).
// Version 1 added "v"; version 0 is the same fields without it.
const invalidationVersion domain.MessageVersion = 1

// invalidation is one message on the channel.
type invalidation struct {
	V    domain.MessageVersion `json:"v"`
	From string                `json:"from"` // the publishing instance
	Keys []string              `json:"keys"` // the Redis keys it changed; each is dropped from every tier
	// Where to acknowledge once the keys are dropped (publishAcked): a stream to add an entry to,
	// else (a message of v0.1.0) a list to push onto. A publisher names both, so instances of
	// the older version, which know only the list, still acknowledge.
	AckStream string `json:"ack_stream,omitempty"`
	Ack       string `json:"ack,omitempty"`
}

// broadcastOptions are the timings and test hooks of a Broadcaster.
type broadcastOptions struct {
	pingEvery   time.Duration // silence on the subscription after which it is pinged
	pingTimeout time.Duration // how long a ping (or the first confirmation) may take before the subscription counts as lost
	minBackoff  time.Duration // wait before resubscribing, doubled after each failure...
	maxBackoff  time.Duration // ... up to this

	beforeSubscribe func(ctx context.Context) error // runs before each subscription attempt (tests hold it)
	received        func(keys []string, own bool)   // runs after a received message was handled (own: skipped; keys nil: unreadable, tiers flushed)
	state           func(subscribed bool)           // runs after each change of state
}

func defaultBroadcastOptions() broadcastOptions {
	return broadcastOptions{pingEvery: time.Second, pingTimeout: time.Second, minBackoff: 100 * time.Millisecond, maxBackoff: 2 * time.Second}
}

// publishWarnEvery spaces the log lines of failed publishes (each is counted).
const publishWarnEvery = 10 * time.Second

// publishTimeout bounds one PUBLISH, whatever the client's own timeouts are: the write it follows
// waits for it.
const publishTimeout = time.Second

// NewBroadcaster subscribes to the invalidation channel of ks and keeps the subscription up until
// the returned cleanup runs. Until the first subscription is confirmed the in-process tiers are
// not used.
func NewBroadcaster(rdb redis.UniversalClient, ks Keyspace, log *slog.Logger) (*Broadcaster, func()) {
	return newBroadcaster(rdb, ks, log, defaultBroadcastOptions())
}

func newBroadcaster(rdb redis.UniversalClient, ks Keyspace, log *slog.Logger, opts broadcastOptions) (*Broadcaster, func()) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	ctx, cancel := context.WithCancel(context.Background())
	b := &Broadcaster{rdb: rdb, channel: ks.Key("invalidations"), id: hex.EncodeToString(id), log: log, opts: opts,
		downSince: time.Now(), cancel: cancel, done: make(chan struct{})}
	go b.run(ctx)
	return b, b.stop
}

// Subscribed reports whether the subscription is confirmed, so that the in-process tiers may be
// used. A nil Broadcaster trusts them.
func (b *Broadcaster) Subscribed() bool { return b == nil || b.subscribed.Load() }

// Channel is the pub/sub channel the invalidations travel on.
func (b *Broadcaster) Channel() string { return b.channel }

// register adds a tier that received keys are dropped from.
func (b *Broadcaster) register(t tier) {
	if b == nil {
		return
	}
	b.tiersMu.Lock()
	defer b.tiersMu.Unlock()
	b.tiers = append(b.tiers, t)
}

// publish tells the other instances that keys changed, in one message. It returns once Redis has
// answered (or the attempt failed, which is logged).
func (b *Broadcaster) publish(keys []string) {
	if b == nil || len(keys) == 0 {
		return
	}
	b.changes.Add(1)                                                                     // before anyone hears of it: a memo built from now on was built after the change
	raw, _ := json.Marshal(invalidation{V: invalidationVersion, From: b.id, Keys: keys}) // strings only: it cannot fail
	// Detached from any request: the change happened, the others must hear of it either way.
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	if err := b.rdb.Publish(ctx, b.channel, raw).Err(); err != nil {
		failed := b.Stats.PublishFailed.Add(1)
		// While Redis is down every write fails here; one line per publishWarnEvery says so.
		now, last := time.Now().UnixNano(), b.lastPublishWarn.Load()
		if now-last >= int64(publishWarnEvery) && b.lastPublishWarn.CompareAndSwap(last, now) {
			b.log.Warn("cache invalidation not broadcast: other instances keep their in-process copies until they expire",
				"channel", b.channel, "keys", len(keys), "first_key", keys[0], "failures_total", failed, "err", err)
		}
		return
	}
	b.Stats.Published.Add(1)
}

// apply drops the keys of a received message from every tier.
func (b *Broadcaster) apply(payload string) {
	var m invalidation
	err := json.Unmarshal([]byte(payload), &m)
	if err == nil && !invalidationVersion.Reads(m.V) {
		err = fmt.Errorf("message of version %d, this release reads %d and %d", m.V, invalidationVersion-1, invalidationVersion)
	}
	if err != nil {
		// What changed is unknown, so anything may be stale.
		b.Stats.UnreadableMsgs.Add(1)
		b.log.Warn("unreadable cache invalidation; flushing every in-process tier", "channel", b.channel, "err", err)
		b.flush()
		if b.opts.received != nil {
			b.opts.received(nil, false)
		}
		return
	}
	own := m.From == b.id // this process dropped its own copies when it made the change
	if !own {
		for _, t := range b.snapshot() {
			t.delete(m.Keys...)
		}
		b.changes.Add(1)
		b.Stats.Received.Add(1)
	}
	if m.AckStream != "" || m.Ack != "" {
		b.acknowledge(m)
	}
	if b.opts.received != nil {
		b.opts.received(m.Keys, own)
	}
}

// flush empties every tier.
func (b *Broadcaster) flush() {
	for _, t := range b.snapshot() {
		t.flush()
	}
	b.changes.Add(1)
	b.Stats.Flushes.Add(1)
}

func (b *Broadcaster) snapshot() []tier {
	b.tiersMu.Lock()
	defer b.tiersMu.Unlock()
	return append([]tier(nil), b.tiers...)
}
