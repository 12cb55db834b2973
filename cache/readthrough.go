package cache

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// Policy is how long entries live and how long a load may take.
type Policy struct {
	TTL         time.Duration // base lifetime of a cached value
	NullTTL     time.Duration // base lifetime of a "does not exist" marker; keep it short
	Jitter      time.Duration // up to this much is added at random to every value's TTL, so entries written together do not expire together (null markers get up to NullTTL/4)
	LoadTimeout time.Duration // a load runs detached from its callers, bounded by this
	// LocalTTL, when positive, keeps entries in process for this long in front of Redis (at most
	// LocalMax of them): a hot key then costs no round trip. Other instances' writes reach this
	// tier through Broadcast, or (without one, or when a broadcast is lost) by expiry, so keep it
	// short (seconds).
	LocalTTL time.Duration
	LocalMax int
	// Broadcast, when set, publishes every change of a cached key to the other instances and drops
	// theirs from this process's tier; the tier is not used while its subscription is down.
	Broadcast *Broadcaster
	// Fallback, when set, bounds the loads sent to PostgreSQL because Redis failed (shared by every
	// cache of the process); nil leaves them unbounded.
	Fallback *FallbackLimit
	// Repair, when set, writes again in the background, until they land, the invalidations Redis
	// did not take (see Repairer); nil leaves them to the cache's next use of Redis.
	Repair *Repairer
}

// Stats counts what a ReadThrough did. Values only grow.
type Stats struct {
	Hits, Misses, NullHits, Fallbacks, Loads, SharedLoads atomic.Int64
	LocalHits                                             atomic.Int64 // answered by the in-process tier (also counted as Hits or NullHits)
	StaleServed                                           atomic.Int64 // keys answered with a suspect cached value because their load failed
	FillsSkipped                                          atomic.Int64 // fills dropped because a change landed after their lookup
	Unconfirmed                                           atomic.Int64 // acknowledged changes some instance did not confirm in time (the write waited out the tiers)
}

// nullMarker is stored for keys whose value does not exist. JSON never starts with a NUL byte, so
// it cannot collide with a real value.
const nullMarker = "\x00"

// entry is one cached answer: a value, or (null) the knowledge that there is none.
type entry[V any] struct {
	v    V
	null bool
}

// observed is what one Redis lookup of a batch of keys found.
type observed[V any] struct {
	hits map[string]entry[V] // entries that answer reads
	// seen holds, for every miss, the state a fill of the key must still find in Redis to be
	// written (the key's fill guard: "" for an absent key, else a tombstone or generation token).
	// A change that lands between the lookup and the fill changes that state, so the fill, which
	// may hold data read before the change committed, is dropped (see ReadThrough's Delete).
	seen map[string]string
	// stale holds misses whose old value may still be served when the source of truth fails
	// (counters marked suspect keep their counts for that).
	stale map[string]V
}

func newObserved[V any](n int) observed[V] {
	return observed[V]{hits: make(map[string]entry[V], n), seen: make(map[string]string, n)}
}

// readThrough is the one read-through path every cached kind's misses go through (ReadThrough's
// single keys, Counters' batches). For a batch of keys it answers what it can from the in-process
// tier, then from Redis in one round trip, and loads the rest through flights: keys already being
// loaded by this process are joined, the others are loaded with one call of the caller's fetch,
// which runs on a context detached from the caller (bounded by Policy.LoadTimeout) so that a
// caller who gives up returns at once and the others still get their values. Inside the flight
// Redis is checked again, so a flight that starts just after another one filled a key does not
// load it again. When Redis fails (not a miss), the keys are loaded anyway and not written back:
// Redis is the speed, PostgreSQL the truth.
//
// It is also the one place this process's own changes to cached keys pass (changing before Redis
// is written, changed once it has been): the in-process tier drops its copies there, and changed
// publishes the keys through Policy.Broadcast, whose subscription drops them from the other
// instances' tiers; a tier is bypassed while its subscription is down (see Broadcaster).
type readThrough[V any] struct {
	name    string
	policy  Policy
	log     *slog.Logger
	stats   *Stats
	local   *local[V] // nil unless Policy.LocalTTL > 0
	flights flights[V]
	// lookup reads keys from Redis in one round trip: what answers reads, and the fill guard of
	// every miss. An error means Redis failed; lookup logs it.
	lookup func(ctx context.Context, keys []string) (observed[V], error)
}

// fetchFunc loads keys from the source of truth in one go and, when seen is not nil, stores what
// it loaded in Redis, each key only if Redis still holds the state seen gives for it (a failed
// write is logged, not returned: the values are right either way). It returns an entry for every
// key.
type fetchFunc[V any] func(ctx context.Context, keys []string, seen map[string]string) (map[string]entry[V], error)

func newReadThroughCore[V any](name string, policy Policy, log *slog.Logger, stats *Stats,
	lookup func(ctx context.Context, keys []string) (observed[V], error)) *readThrough[V] {
	if policy.LoadTimeout <= 0 {
		policy.LoadTimeout = 5 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &readThrough[V]{name: name, policy: policy, log: log, stats: stats, lookup: lookup}
	if policy.LocalTTL > 0 {
		c.local = newLocal[V](policy.LocalTTL, policy.LocalMax)
		policy.Broadcast.register(c.local)
	}
	return c
}

// localInUse reports whether the in-process tier may be read and filled now: there is one, and
// the broadcast that keeps it coherent is subscribed.
func (c *readThrough[V]) localInUse() bool { return c.local != nil && c.policy.Broadcast.Subscribed() }

// localHit answers key from the in-process tier when the tier may be used and holds it, counted
// as get counts it. It is get's first step for a single key without get's slices and maps.
func (c *readThrough[V]) localHit(key string) (entry[V], bool) {
	if !c.localInUse() {
		return entry[V]{}, false
	}
	e, ok, _ := c.local.get(key)
	if !ok {
		return entry[V]{}, false
	}
	c.stats.LocalHits.Add(1)
	c.hit(e.null)
	return entry[V]{v: e.v, null: e.null}, true
}

// get returns the entries of keys (which must not repeat), loading the misses with fetch.
func (c *readThrough[V]) get(ctx context.Context, keys []string, fetch fetchFunc[V]) (map[string]entry[V], error) {
	out := make(map[string]entry[V], len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rest, stamps := keys, map[string]uint64(nil)
	if c.localInUse() {
		rest = nil
		for i, k := range keys {
			e, ok, stamp := c.local.get(k)
			if !ok {
				if stamps == nil { // made at the first miss: a read the tier answers whole allocates neither
					rest, stamps = make([]string, 0, len(keys)-i), make(map[string]uint64, len(keys)-i)
				}
				rest, stamps[k] = append(rest, k), stamp
				continue
			}
			c.stats.LocalHits.Add(1)
			c.hit(e.null)
			out[k] = entry[V]{v: e.v, null: e.null}
		}
		if len(rest) == 0 {
			return out, nil
		}
	}
	got, err := c.lookup(ctx, rest)
	found := got.hits
	redisFailed := err != nil
	misses := rest
	if redisFailed {
		if err := ctx.Err(); err != nil {
			// The caller gave up (that is why Redis "failed"): nothing to fall back for.
			return nil, err
		}
		c.stats.Fallbacks.Add(int64(len(rest)))
	} else {
		misses = nil
		for _, k := range rest {
			if e, ok := found[k]; ok {
				c.hit(e.null)
				out[k] = e
				c.remember(k, e, stamps[k])
				continue
			}
			c.stats.Misses.Add(1)
			misses = append(misses, k)
		}
		if len(misses) == 0 {
			return out, nil
		}
	}

	waits := c.flights.do(misses, func(keys []string) (map[string]entry[V], error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.policy.LoadTimeout)
		defer cancel()
		return c.load(lctx, keys, redisFailed, stamps, fetch)
	})
	joined := false
	for _, w := range waits {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.f.done:
		}
		if w.f.err != nil {
			return nil, w.f.err
		}
		joined = joined || w.joined
		for _, k := range w.keys {
			out[k] = w.f.vals[k]
		}
	}
	if joined {
		c.stats.SharedLoads.Add(1)
	}
	return out, nil
}

// load is one flight: Redis again (unless it just failed), then fetch for what is still missing.
// The fill guards come from this second lookup, the last look at Redis before the source of truth
// is read.
func (c *readThrough[V]) load(ctx context.Context, keys []string, redisFailed bool, stamps map[string]uint64, fetch fetchFunc[V]) (map[string]entry[V], error) {
	vals := make(map[string]entry[V], len(keys))
	var got observed[V]
	if !redisFailed {
		var err error
		// When Redis fails now, writing to it would most likely fail too: got.seen stays nil, so
		// nothing is written back; the first read after it recovers fills the keys.
		got, err = c.lookup(ctx, keys)
		if err != nil {
			got, redisFailed = observed[V]{}, true
		}
		rest := make([]string, 0, len(keys))
		for _, k := range keys {
			if e, ok := got.hits[k]; ok {
				vals[k] = e
			} else {
				rest = append(rest, k)
			}
		}
		if keys = rest; len(keys) == 0 {
			return vals, nil
		}
	}
	if redisFailed {
		// In place of Redis: bounded, so an outage cannot send every read to PostgreSQL at once.
		release, err := c.policy.Fallback.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	c.stats.Loads.Add(1)
	loaded, err := fetch(fillContext(ctx, redisFailed, got.seen), keys, got.seen)
	if err != nil {
		return c.serveStale(ctx, keys, vals, got.stale, err)
	}
	for _, k := range keys {
		e := loaded[k]
		vals[k] = e
		// Also while Redis is down: the in-process tier then spares PostgreSQL the repeats.
		c.remember(k, e, stamps[k])
	}
	return vals, nil
}

// serveStale answers a flight whose load failed with the stale values Redis still held for every
// one of its keys, if it held one for each; otherwise the load's error stands. Stale values are not
// kept in process: the next read tries the source of truth again.
func (c *readThrough[V]) serveStale(ctx context.Context, keys []string, vals map[string]entry[V], stale map[string]V, loadErr error) (map[string]entry[V], error) {
	for _, k := range keys {
		if _, ok := stale[k]; !ok {
			return nil, loadErr
		}
	}
	for _, k := range keys {
		vals[k] = entry[V]{v: stale[k]}
	}
	c.stats.StaleServed.Add(int64(len(keys)))
	c.log.WarnContext(ctx, "load failed; serving the last cached values", "cache", c.name, "keys", len(keys), "err", loadErr)
	return vals, nil
}

func (c *readThrough[V]) hit(null bool) {
	if null {
		c.stats.NullHits.Add(1)
	} else {
		c.stats.Hits.Add(1)
	}
}

// remember keeps an entry fetched after stamp in the in-process tier, if it is in use and no
// change (of this process, or broadcast by another) has dropped the key since.
func (c *readThrough[V]) remember(key string, e entry[V], stamp uint64) {
	if c.localInUse() {
		c.local.setIfUnchanged(key, e.v, e.null, stamp)
	}
}

// changing is called before this process changes keys in Redis: their in-process copies go.
func (c *readThrough[V]) changing(keys ...string) {
	if c.local != nil && len(keys) > 0 {
		c.local.delete(keys...)
	}
}

// changed is called once Redis has this process's change of keys (or the attempt failed): the
// in-process copies go again, since a read that fetched the old value in between must not keep
// it (see local), and the other instances are told to drop theirs (before the write answers).
func (c *readThrough[V]) changed(keys ...string) {
	if c.local != nil && len(keys) > 0 {
		c.local.delete(keys...)
	}
	c.policy.Broadcast.publish(keys)
}

// changedAcked is changed for a change every instance must have applied before the write answers
// (read-your-writes through any instance): the broadcast waits for each receiver to confirm, for
// at most wait. It reports whether all did (see Broadcaster.publishAcked).
func (c *readThrough[V]) changedAcked(wait time.Duration, keys ...string) bool {
	if len(keys) == 0 {
		return true
	}
	if c.local != nil {
		c.local.delete(keys...)
	}
	return c.policy.Broadcast.publishAcked(keys, wait)
}

// jittered returns ttl plus a random extra in [0, jitter].
func jittered(ttl, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return ttl
	}
	return ttl + rand.N(jitter+1)
}

// fillContext is the context a fill reads the source of truth with. A read replica may serve it
// only when Redis answered and holds nothing for any of its keys: no tombstone of a recent
// invalidation, no generation token. A tombstone outlives the replicas' lag bound many times
// over (a minute against about a second), so a key without one has not changed within the
// bound, and any replica in the rotation has replayed its last change; a key with one may have
// changed after what a lagging replica has replayed, so the fill reads the primary and can never
// store the old form again.
func fillContext(ctx context.Context, redisFailed bool, seen map[string]string) context.Context {
	if redisFailed {
		return domain.WithPrimaryReads(ctx)
	}
	for _, guard := range seen {
		if guard != "" {
			return domain.WithPrimaryReads(ctx)
		}
	}
	return ctx
}
