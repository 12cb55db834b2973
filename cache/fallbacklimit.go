package cache

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// FallbackLimit bounds how many read-through loads this process sends to PostgreSQL at once in
// place of Redis. While Redis is down every read that Redis would have answered becomes a
// PostgreSQL query; without a bound a burst of them takes every pooled connection and the
// requests that need PostgreSQL anyway (writes, misses) queue behind reads PostgreSQL was never
// sized for. A load that finds no free slot within the wait fails with domain.ErrOverloaded
// (503, Retry-After: 1): the client retries after a second instead of timing out.
//
// Only fallbacks take a slot: a miss while Redis answers loads unbounded, as before, and the
// healthy path never touches the limit. Singleflight still runs first, so identical misses share
// one load and one slot. One limit serves every cache of the process (one pool behind them).
type FallbackLimit struct {
	slots chan struct{}
	wait  time.Duration
	// Refused counts fallback loads that found no slot in time; InUse is how many slots are held,
	// Waiting how many loads wait for one.
	Refused, InUse, Waiting atomic.Int64
}

// NewFallbackLimit allows n concurrent fallback loads (at least one), each waiting at most wait
// for a slot (zero: a slot must be free at once).
func NewFallbackLimit(n int, wait time.Duration) *FallbackLimit {
	return &FallbackLimit{slots: make(chan struct{}, max(n, 1)), wait: max(wait, 0)}
}

// Size is how many fallback loads may run at once.
func (l *FallbackLimit) Size() int { return cap(l.slots) }

// acquire takes a slot, waiting at most the limit's wait (and no longer than ctx); release gives
// it back. A nil limit allows everything.
func (l *FallbackLimit) acquire(ctx context.Context) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
		return l.taken(), nil
	default:
	}
	if l.wait > 0 {
		l.Waiting.Add(1)
		defer l.Waiting.Add(-1)
		t := time.NewTimer(l.wait)
		defer t.Stop()
		select {
		case l.slots <- struct{}{}:
			return l.taken(), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	l.Refused.Add(1)
	return nil, domain.ErrOverloaded
}

func (l *FallbackLimit) taken() func() {
	l.InUse.Add(1)
	return func() {
		l.InUse.Add(-1)
		<-l.slots
	}
}
