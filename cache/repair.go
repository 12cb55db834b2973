package cache

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Repairer retries, off the request path, this process's invalidations that Redis did not take
// (the tombstone of an article, user, list page, tag cloud, feed token or follow list, an author
// page's token, a viewer flag's tombstone, a counter hash's suspect mark), until each has landed.
//
// An invalidation that fails leaves the old entry in Redis, where every instance that reaches
// Redis would serve it until it expires (minutes). The cache whose write failed remembers the
// key (up to maxRepairs per cache) and kicks the repairer, which asks every cache to write what
// it remembers, again and again (100 ms, doubling to 2 s) until nothing is left; the caches
// also write it at their next use of Redis, and until it is written they treat the key as a
// miss, so this process never serves an entry it knows is stale. So the stale entry lives as long
// as this process cannot write to Redis and no longer: normally an instance cut from a Redis the
// others still reach (with Redis down for all, nobody serves it). What is remembered is lost if
// the process ends first; the entry then stays until it expires.
//
// A nil *Repairer retries nothing in the background: repairs wait for the cache's next use.
type Repairer struct {
	log  *slog.Logger
	opts repairOptions
	wake chan struct{}

	mu    sync.Mutex
	parts []func(context.Context) int

	cancel context.CancelFunc
	done   chan struct{}

	Stats RepairStats
}

// RepairStats counts what a Repairer did.
type RepairStats struct {
	Pending  atomic.Int64 // keys waiting for their invalidation after the last round
	Rounds   atomic.Int64 // rounds over every cache's remembered keys
	Failures atomic.Int64 // rounds that left keys behind (Redis still failing)
}

type repairOptions struct {
	minBackoff, maxBackoff time.Duration
	round                  func(left int) // runs after each round (tests)
}

func defaultRepairOptions() repairOptions {
	return repairOptions{minBackoff: 100 * time.Millisecond, maxBackoff: 2 * time.Second}
}

// NewRepairer starts the repairer; the returned cleanup stops it.
func NewRepairer(log *slog.Logger) (*Repairer, func()) {
	return newRepairer(log, defaultRepairOptions())
}

func newRepairer(log *slog.Logger, opts repairOptions) (*Repairer, func()) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Repairer{log: log, opts: opts, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go r.run(ctx)
	return r, r.stop
}

// register adds a cache's repair: it writes what it can of its remembered invalidations and
// returns how many keys are still waiting.
func (r *Repairer) register(part func(context.Context) int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts = append(r.parts, part)
}

// kick says a cache has remembered a failed invalidation.
func (r *Repairer) kick() {
	if r == nil {
		return
	}
	select {
	case r.wake <- struct{}{}:
	default: // a round is due already
	}
}

func (r *Repairer) run(ctx context.Context) {
	defer close(r.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		for backoff := r.opts.minBackoff; ; backoff = min(2*backoff, r.opts.maxBackoff) {
			if r.round(ctx) == 0 {
				break
			}
			timer := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}
}

// round asks every cache to write its remembered invalidations once; it returns what is left.
func (r *Repairer) round(ctx context.Context) int {
	r.mu.Lock()
	parts := append([]func(context.Context) int(nil), r.parts...)
	r.mu.Unlock()
	left := 0
	for _, part := range parts {
		left += part(ctx)
	}
	r.Stats.Rounds.Add(1)
	r.Stats.Pending.Store(int64(left))
	if left > 0 {
		r.Stats.Failures.Add(1)
	}
	if r.opts.round != nil {
		r.opts.round(left)
	}
	return left
}

func (r *Repairer) stop() {
	r.cancel()
	<-r.done
}

// repairSet remembers the keys whose invalidation failed (a tombstone, a token, a counter hash a
// change may be missing from) until the invalidation is written. Without it such an entry would
// be served stale until it expires.
//
// A key stays remembered while its repair is being written (taken, not yet settled): a read that
// overlaps the repair must still treat the entry as stale, since the read may reach Redis before
// the invalidation does.
type repairSet struct {
	n        atomic.Int64 // len(items) + len(inflight), read without the lock on every read of the cache
	failedAt atomic.Int64 // unix nanoseconds of the last failed write: wait a little before the next try
	mu       sync.Mutex
	items    map[string]struct{}
	inflight map[string]int // keys taken by repairs still writing them, and how many repairs
}

// maxRepairs bounds the memory a long Redis outage under many writes can take; keys past it stay
// stale until they expire (and a warning says so).
const maxRepairs = 100000

func (m *repairSet) add(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = make(map[string]struct{})
	}
	if _, ok := m.items[key]; !ok && len(m.items) >= maxRepairs {
		return false
	}
	m.items[key] = struct{}{}
	m.count()
	return true
}

// take hands every remembered key to a repair, which writes them and then calls settle with them
// (after adding back any it could not write). Until then has still reports them.
func (m *repairSet) take() []string {
	if m.n.Load() == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.items) == 0 {
		return nil
	}
	if m.inflight == nil {
		m.inflight = make(map[string]int)
	}
	out := make([]string, 0, len(m.items))
	for k := range m.items {
		out = append(out, k)
		m.inflight[k]++
	}
	clear(m.items)
	m.count()
	return out
}

// settle ends the repair of keys that take handed out.
func (m *repairSet) settle(keys []string) {
	if len(keys) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if m.inflight[k] <= 1 {
			delete(m.inflight, k)
		} else {
			m.inflight[k]--
		}
	}
	m.count()
}

func (m *repairSet) count() { m.n.Store(int64(len(m.items) + len(m.inflight))) }

// has reports whether key waits for its invalidation, or is being repaired.
func (m *repairSet) has(key string) bool {
	if m.n.Load() == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, waiting := m.items[key]
	return waiting || m.inflight[key] > 0
}

// pendingAmong returns which of keys wait for or are in the middle of a repair (nil when none
// does). A read takes it before it reaches Redis: the read may get there before the repair's
// write, and the repair may have settled by the time Redis answers.
func (m *repairSet) pendingAmong(keys []string) map[string]bool {
	if m.n.Load() == 0 {
		return nil
	}
	var pending map[string]bool
	for _, k := range keys {
		if m.has(k) {
			if pending == nil {
				pending = make(map[string]bool)
			}
			pending[k] = true
		}
	}
	return pending
}

// size is how many keys wait or are being repaired.
func (m *repairSet) size() int { return int(m.n.Load()) }
