package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

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
	// tier only by expiry, so keep it short (seconds).
	LocalTTL time.Duration
	LocalMax int
}

// Stats counts what a ReadThrough did. Values only grow.
type Stats struct {
	Hits, Misses, NullHits, Fallbacks, Loads, SharedLoads atomic.Int64
	LocalHits                                             atomic.Int64 // answered by the in-process tier (also counted as Hits or NullHits)
}

// nullMarker is stored for keys whose value does not exist. JSON never starts with a NUL byte, so
// it cannot collide with a real value.
const nullMarker = "\x00"

// entry is one cached answer: a value, or (null) the knowledge that there is none.
type entry[V any] struct {
	v    V
	null bool
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
// is written, changed once it has been): the in-process tier drops its copies there. A cross-
// instance broadcaster of changes belongs here too, and nowhere else: changed publishes the keys,
// the subscription drops them from local, and local is bypassed while the subscription is down.
// It would reach every readThrough through Policy, which every cache constructor already takes.
type readThrough[V any] struct {
	name    string
	policy  Policy
	log     *slog.Logger
	stats   *Stats
	local   *local[V] // nil unless Policy.LocalTTL > 0
	flights flights[V]
	// lookup reads keys from Redis in one round trip: the entries found (values and null markers);
	// missing keys are absent. An error means Redis failed; lookup logs it.
	lookup func(ctx context.Context, keys []string) (map[string]entry[V], error)
}

// fetchFunc loads keys from the source of truth in one go and, when writeBack, stores what it
// loaded in Redis (a failed write is logged, not returned: the values are right either way). It
// returns an entry for every key.
type fetchFunc[V any] func(ctx context.Context, keys []string, writeBack bool) (map[string]entry[V], error)

func newReadThroughCore[V any](name string, policy Policy, log *slog.Logger, stats *Stats,
	lookup func(ctx context.Context, keys []string) (map[string]entry[V], error)) *readThrough[V] {
	if policy.LoadTimeout <= 0 {
		policy.LoadTimeout = 5 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &readThrough[V]{name: name, policy: policy, log: log, stats: stats, lookup: lookup}
	if policy.LocalTTL > 0 {
		c.local = newLocal[V](policy.LocalTTL, policy.LocalMax)
	}
	return c
}

// get returns the entries of keys (which must not repeat), loading the misses with fetch.
func (c *readThrough[V]) get(ctx context.Context, keys []string, fetch fetchFunc[V]) (map[string]entry[V], error) {
	out := make(map[string]entry[V], len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rest, stamps := keys, map[string]uint64(nil)
	if c.local != nil {
		rest, stamps = make([]string, 0, len(keys)), make(map[string]uint64, len(keys))
		for _, k := range keys {
			e, ok, stamp := c.local.get(k)
			if !ok {
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
	found, err := c.lookup(ctx, rest)
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
func (c *readThrough[V]) load(ctx context.Context, keys []string, redisFailed bool, stamps map[string]uint64, fetch fetchFunc[V]) (map[string]entry[V], error) {
	vals := make(map[string]entry[V], len(keys))
	writeBack := !redisFailed
	if !redisFailed {
		found, err := c.lookup(ctx, keys)
		// When Redis fails now, writing to it would most likely fail too: skip the write, the first
		// read after it recovers fills the keys.
		writeBack = err == nil
		rest := make([]string, 0, len(keys))
		for _, k := range keys {
			if e, ok := found[k]; ok {
				vals[k] = e
			} else {
				rest = append(rest, k)
			}
		}
		if keys = rest; len(keys) == 0 {
			return vals, nil
		}
	}
	c.stats.Loads.Add(1)
	loaded, err := fetch(ctx, keys, writeBack)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		e := loaded[k]
		vals[k] = e
		// Also while Redis is down: the in-process tier then spares PostgreSQL the repeats.
		c.remember(k, e, stamps[k])
	}
	return vals, nil
}

func (c *readThrough[V]) hit(null bool) {
	if null {
		c.stats.NullHits.Add(1)
	} else {
		c.stats.Hits.Add(1)
	}
}

// remember keeps an entry fetched after stamp in the in-process tier, if there is one and no
// change of this process has dropped the key since.
func (c *readThrough[V]) remember(key string, e entry[V], stamp uint64) {
	if c.local != nil {
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
// it (see local).
func (c *readThrough[V]) changed(keys ...string) {
	if c.local != nil && len(keys) > 0 {
		c.local.delete(keys...)
	}
}

// ReadThrough is a Redis read-through cache for values of type V, one JSON string per key.
//
// A miss calls the loader through the shared read-through path (readThrough), so one process
// loads a key at most once at a time however many requests want it, on a context detached from
// the caller (with its own timeout). A loader returning domain.ErrNotFound is cached as a
// short-lived null marker. When Redis itself fails (not a miss), the value is loaded and served
// anyway, without trying to write it back. Failures to write the cache are logged, never returned.
type ReadThrough[V any] struct {
	rdb   redis.UniversalClient
	rt    *readThrough[V]
	Stats Stats
}

// NewReadThrough returns a read-through cache; name labels its log lines.
func NewReadThrough[V any](rdb redis.UniversalClient, name string, policy Policy, log *slog.Logger) *ReadThrough[V] {
	c := &ReadThrough[V]{rdb: rdb}
	c.rt = newReadThroughCore[V](name, policy, log, &c.Stats, c.lookup)
	return c
}

// Get returns the value under key, loading it with load on a miss.
func (c *ReadThrough[V]) Get(ctx context.Context, key string, load func(context.Context) (V, error)) (V, error) {
	var zero V
	got, err := c.rt.get(ctx, []string{key}, func(ctx context.Context, _ []string, writeBack bool) (map[string]entry[V], error) {
		v, err := load(ctx)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			if writeBack {
				c.store(ctx, key, nullMarker, c.rt.policy.NullTTL, c.rt.policy.NullTTL/4)
			}
			return map[string]entry[V]{key: {null: true}}, nil
		case err != nil:
			return nil, err
		}
		if writeBack {
			if raw, err := json.Marshal(v); err != nil {
				c.rt.log.ErrorContext(ctx, "cache encode failed", "cache", c.rt.name, "key", key, "err", err)
			} else {
				c.store(ctx, key, string(raw), c.rt.policy.TTL, c.rt.policy.Jitter)
			}
		}
		return map[string]entry[V]{key: {v: v}}, nil
	})
	if err != nil {
		return zero, err
	}
	if e := got[key]; !e.null {
		return e.v, nil
	}
	return zero, domain.ErrNotFound
}

// Put stores v under key for ttl plus jitter. With onlyIfAbsent it leaves an existing entry
// alone (used to preload without overwriting fresher data).
func (c *ReadThrough[V]) Put(ctx context.Context, key string, v V, ttl time.Duration, onlyIfAbsent bool) (err error) {
	// Dropped now and again after the write (a read that fetched the old entry in between must not
	// keep it); this instance's own value is kept only once Redis has it too.
	c.rt.changing(key)
	defer func() {
		c.rt.changed(key)
		if err == nil && !onlyIfAbsent && c.rt.local != nil {
			c.rt.local.set(key, v, false)
		}
	}()
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cache %s: encode: %w", c.rt.name, err)
	}
	exp := jittered(ttl, min(c.rt.policy.Jitter, ttl/4))
	if onlyIfAbsent {
		err = c.rdb.SetArgs(ctx, key, raw, redis.SetArgs{Mode: "NX", TTL: exp}).Err()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
	} else {
		err = c.rdb.Set(ctx, key, raw, exp).Err()
	}
	if err != nil {
		return fmt.Errorf("cache %s: put: %w", c.rt.name, err)
	}
	return nil
}

// Delete removes keys. Callers write PostgreSQL first and then delete, so a failure here leaves an
// entry that is at most one TTL stale; the error is returned for the caller to log.
func (c *ReadThrough[V]) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	var err error
	if len(keys) == 1 {
		err = c.rdb.Del(ctx, keys[0]).Err()
	} else {
		// One DEL per key, pipelined: on a Redis Cluster the keys may lie in different slots,
		// which one DEL cannot span (CROSSSLOT); go-redis sends each node its share.
		_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Del(ctx, k)
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("cache %s: delete: %w", c.rt.name, err)
	}
	return nil
}

// lookup reads keys with one GET each (Get asks for one at a time).
func (c *ReadThrough[V]) lookup(ctx context.Context, keys []string) (map[string]entry[V], error) {
	out := make(map[string]entry[V], len(keys))
	for _, key := range keys {
		raw, err := c.rdb.Get(ctx, key).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			if ctx.Err() == nil {
				c.rt.log.WarnContext(ctx, "cache read failed, serving from the database", "cache", c.rt.name, "key", key, "err", err)
			}
			return nil, err
		case raw == nullMarker:
			out[key] = entry[V]{null: true}
			continue
		}
		var v V
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			// A value written by an older, incompatible version: treat it as a miss and overwrite it.
			c.rt.log.WarnContext(ctx, "cache decode failed", "cache", c.rt.name, "key", key, "err", err)
			continue
		}
		out[key] = entry[V]{v: v}
	}
	return out, nil
}

func (c *ReadThrough[V]) store(ctx context.Context, key, value string, ttl, jitter time.Duration) {
	if err := c.rdb.Set(ctx, key, value, jittered(ttl, jitter)).Err(); err != nil {
		c.rt.log.WarnContext(ctx, "cache write failed", "cache", c.rt.name, "key", key, "err", err)
	}
}

// jittered returns ttl plus a random extra in [0, jitter].
func jittered(ttl, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return ttl
	}
	return ttl + rand.N(jitter+1)
}
