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
	"golang.org/x/sync/singleflight"

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

// ReadThrough is a Redis read-through cache for values of type V.
//
// A miss calls the loader through singleflight, so one process loads a key at most once at a time
// however many requests want it. The load runs on a context detached from the caller (with its own
// timeout): a caller that gives up returns at once and the others still get the value. Inside the
// flight the cache is checked again, so a flight that starts just after another filled the key does
// not reload. A loader returning domain.ErrNotFound is cached as a short-lived null marker. When
// Redis itself fails (not a miss), the value is loaded and served anyway, without trying to write
// it back: Redis is the speed, PostgreSQL the truth. Failures to write the cache are logged, never
// returned.
type ReadThrough[V any] struct {
	rdb    redis.UniversalClient
	policy Policy
	name   string
	log    *slog.Logger
	group  singleflight.Group
	local  *local[V] // nil unless Policy.LocalTTL > 0
	Stats  Stats
}

// NewReadThrough returns a read-through cache; name labels its log lines.
func NewReadThrough[V any](rdb redis.UniversalClient, name string, policy Policy, log *slog.Logger) *ReadThrough[V] {
	if policy.LoadTimeout <= 0 {
		policy.LoadTimeout = 5 * time.Second
	}
	c := &ReadThrough[V]{rdb: rdb, policy: policy, name: name, log: log}
	if policy.LocalTTL > 0 {
		c.local = newLocal[V](policy.LocalTTL, policy.LocalMax)
	}
	return c
}

// remember keeps a value (or a null marker) fetched after stamp in the in-process tier, if there
// is one and no write of this instance has dropped the key since.
func (c *ReadThrough[V]) remember(key string, v V, null bool, stamp uint64) {
	if c.local != nil {
		c.local.setIfUnchanged(key, v, null, stamp)
	}
}

type lookupResult int

const (
	lookupMiss lookupResult = iota
	lookupHit
	lookupNull
	lookupFailed
)

// Get returns the value under key, loading it with load on a miss.
func (c *ReadThrough[V]) Get(ctx context.Context, key string, load func(context.Context) (V, error)) (V, error) {
	var zero V
	var stamp uint64
	if c.local != nil {
		var e localEntry[V]
		var ok bool
		if e, ok, stamp = c.local.get(key); ok {
			c.Stats.LocalHits.Add(1)
			if e.null {
				c.Stats.NullHits.Add(1)
				return zero, domain.ErrNotFound
			}
			c.Stats.Hits.Add(1)
			return e.v, nil
		}
	}
	v, res := c.lookup(ctx, key)
	switch res {
	case lookupHit:
		c.Stats.Hits.Add(1)
		c.remember(key, v, false, stamp)
		return v, nil
	case lookupNull:
		c.Stats.NullHits.Add(1)
		c.remember(key, zero, true, stamp)
		return zero, domain.ErrNotFound
	case lookupFailed:
		if err := ctx.Err(); err != nil {
			// The caller gave up (that is why Redis "failed"): nothing to fall back for.
			return zero, err
		}
		c.Stats.Fallbacks.Add(1)
	default:
		c.Stats.Misses.Add(1)
	}
	redisFailed := res == lookupFailed

	ch := c.group.DoChan(key, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.policy.LoadTimeout)
		defer cancel()
		if !redisFailed {
			switch v, res := c.lookup(lctx, key); res {
			case lookupHit:
				return v, nil
			case lookupNull:
				return zero, domain.ErrNotFound
			}
		}
		c.Stats.Loads.Add(1)
		v, err := load(lctx)
		// When Redis just failed this key, writing to it would most likely fail too and double the
		// cost of every read while Redis is down: skip the write, the first read after it recovers
		// fills the key.
		switch {
		case errors.Is(err, domain.ErrNotFound):
			c.remember(key, zero, true, stamp)
			if !redisFailed {
				c.store(lctx, key, nullMarker, c.policy.NullTTL, c.policy.NullTTL/4)
			}
			return zero, err
		case err != nil:
			return zero, err
		case redisFailed:
			// While Redis is down the in-process tier spares PostgreSQL the repeats.
			c.remember(key, v, false, stamp)
			return v, nil
		}
		c.remember(key, v, false, stamp)
		if raw, err := json.Marshal(v); err != nil {
			c.log.ErrorContext(lctx, "cache encode failed", "cache", c.name, "key", key, "err", err)
		} else {
			c.store(lctx, key, string(raw), c.policy.TTL, c.policy.Jitter)
		}
		return v, nil
	})
	select {
	case <-ctx.Done():
		return zero, ctx.Err()
	case r := <-ch:
		if r.Shared {
			c.Stats.SharedLoads.Add(1)
		}
		if r.Err != nil {
			return zero, r.Err
		}
		return r.Val.(V), nil
	}
}

// Put stores v under key for ttl plus jitter. With onlyIfAbsent it leaves an existing entry
// alone (used to preload without overwriting fresher data).
func (c *ReadThrough[V]) Put(ctx context.Context, key string, v V, ttl time.Duration, onlyIfAbsent bool) (err error) {
	if c.local != nil {
		// Dropped now and again after the write (a read that fetched the old entry in between
		// must not keep it); this instance's own value is kept only once Redis has it too.
		c.local.delete(key)
		defer func() {
			c.local.delete(key)
			if err == nil && !onlyIfAbsent {
				c.local.set(key, v, false)
			}
		}()
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cache %s: encode: %w", c.name, err)
	}
	exp := jittered(ttl, min(c.policy.Jitter, ttl/4))
	if onlyIfAbsent {
		err = c.rdb.SetArgs(ctx, key, raw, redis.SetArgs{Mode: "NX", TTL: exp}).Err()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
	} else {
		err = c.rdb.Set(ctx, key, raw, exp).Err()
	}
	if err != nil {
		return fmt.Errorf("cache %s: put: %w", c.name, err)
	}
	return nil
}

// Delete removes keys. Callers write PostgreSQL first and then delete, so a failure here leaves an
// entry that is at most one TTL stale; the error is returned for the caller to log.
func (c *ReadThrough[V]) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if c.local != nil {
		c.local.delete(keys...)
		// Again once Redis has dropped them: a read that fetched the old entry in between must
		// not keep it (see local).
		defer c.local.delete(keys...)
	}
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
		return fmt.Errorf("cache %s: delete: %w", c.name, err)
	}
	return nil
}

func (c *ReadThrough[V]) lookup(ctx context.Context, key string) (V, lookupResult) {
	var zero V
	raw, err := c.rdb.Get(ctx, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return zero, lookupMiss
	case err != nil:
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "cache read failed, serving from the database", "cache", c.name, "key", key, "err", err)
		}
		return zero, lookupFailed
	case raw == nullMarker:
		return zero, lookupNull
	}
	var v V
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		// A value written by an older, incompatible version: treat it as a miss and overwrite it.
		c.log.WarnContext(ctx, "cache decode failed", "cache", c.name, "key", key, "err", err)
		return zero, lookupMiss
	}
	return v, lookupHit
}

func (c *ReadThrough[V]) store(ctx context.Context, key, value string, ttl, jitter time.Duration) {
	if err := c.rdb.Set(ctx, key, value, jittered(ttl, jitter)).Err(); err != nil {
		c.log.WarnContext(ctx, "cache write failed", "cache", c.name, "key", key, "err", err)
	}
}

// jittered returns ttl plus a random extra in [0, jitter].
func jittered(ttl, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return ttl
	}
	return ttl + rand.N(jitter+1)
}
