package cache

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// run keeps the subscription up until ctx ends: one session per connection, a fresh PubSub (and so
// a fresh connection) after every failure, with a growing pause between failed attempts.
func (b *Broadcaster) run(ctx context.Context) {
	defer close(b.done)
	backoff, everUp, startLogged := b.opts.minBackoff, false, false
	for {
		confirmed, err := b.session(ctx)
		if ctx.Err() != nil {
			b.subscribed.Store(false)
			return
		}
		if confirmed {
			backoff, everUp = b.opts.minBackoff, true
			b.Stats.Losses.Add(1)
		}
		b.setSubscribed(false, err)
		if !everUp && !startLogged {
			startLogged = true
			// Once, at start: the tiers have not been on yet, so there was no change of state to log.
			b.log.Warn("cache invalidation channel not subscribed yet: in-process cache tiers stay off until it is (reads go to Redis)",
				"channel", b.channel, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, b.opts.maxBackoff)
	}
}

// session subscribes on a new connection and applies what arrives until the connection fails, a
// ping goes unanswered or ctx ends. confirmed says whether the subscription was confirmed (and the
// tiers in use) at some point.
func (b *Broadcaster) session(ctx context.Context) (confirmed bool, err error) {
	if b.opts.beforeSubscribe != nil {
		if err := b.opts.beforeSubscribe(ctx); err != nil {
			return false, err
		}
	}
	// Subscribe's own error (Redis unreachable) is the first receive's error too.
	ps := b.rdb.Subscribe(ctx, b.channel)
	defer func() { _ = ps.Close() }()
	if !b.track(ps) {
		return false, context.Canceled
	}
	var pingSent time.Time // zero: no ping outstanding
	lastHeard := time.Now()
	for {
		var wait time.Duration
		switch {
		case !pingSent.IsZero():
			wait = time.Until(pingSent.Add(b.opts.pingTimeout))
		case !confirmed:
			wait = time.Until(lastHeard.Add(b.opts.pingTimeout))
		default:
			wait = time.Until(lastHeard.Add(b.opts.pingEvery))
		}
		msg, err := ps.ReceiveTimeout(ctx, max(wait, time.Millisecond))
		if err != nil {
			if !isTimeout(err) || ctx.Err() != nil {
				return confirmed, err
			}
			switch {
			case !confirmed:
				return false, fmt.Errorf("no subscription confirmation within %v", b.opts.pingTimeout)
			case !pingSent.IsZero():
				return true, fmt.Errorf("no answer to a ping within %v", b.opts.pingTimeout)
			}
			if err := ps.Ping(ctx); err != nil {
				return true, fmt.Errorf("ping: %w", err)
			}
			pingSent = time.Now()
			continue
		}
		lastHeard = time.Now()
		switch m := msg.(type) {
		case *redis.Message:
			b.apply(m.Payload)
		case *redis.Pong:
			pingSent = time.Time{}
		case *redis.Subscription:
			if m.Channel != b.channel {
				continue
			}
			if m.Kind != "subscribe" {
				return confirmed, fmt.Errorf("subscription ended by the server (%s)", m.Kind)
			}
			// Every message published from now on reaches this connection; what was published
			// before may have been missed, so nothing kept so far is trusted.
			b.flush()
			confirmed = true
			b.Stats.Subscriptions.Add(1)
			b.setSubscribed(true, nil)
		}
	}
}

// setSubscribed records the subscription's state, logging and reporting only changes; why is
// the reason it was lost.
func (b *Broadcaster) setSubscribed(up bool, why error) {
	if b.subscribed.Swap(up) == up {
		return
	}
	if up {
		b.log.Info("cache invalidation channel subscribed: in-process cache tiers flushed and in use",
			"channel", b.channel, "down_for", time.Since(b.downSince).Round(time.Millisecond))
	} else {
		b.downSince = time.Now()
		b.log.Warn("cache invalidation subscription lost: in-process cache tiers are off until it is back (reads go to Redis)",
			"channel", b.channel, "err", why)
	}
	if b.opts.state != nil {
		b.opts.state(up)
	}
}

// track makes ps the subscription stop closes; false when stop has run already.
func (b *Broadcaster) track(ps *redis.PubSub) bool {
	b.psMu.Lock()
	defer b.psMu.Unlock()
	if b.stopped {
		return false
	}
	b.ps = ps
	return true
}

// stop ends the subscription and waits for its goroutine.
func (b *Broadcaster) stop() {
	b.psMu.Lock()
	b.stopped = true
	b.cancel()
	if b.ps != nil {
		_ = b.ps.Close() // a receive blocked on the connection returns now
	}
	b.psMu.Unlock()
	<-b.done
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
