package cache

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:embed lua/fill_if_unchanged.lua
var fillIfUnchangedSrc string

var fillIfUnchanged = redis.NewScript(fillIfUnchangedSrc)

// tombstonePrefix starts the value an invalidation leaves in place of an entry. Like nullMarker it
// cannot begin JSON, so it never collides with a value.
const tombstonePrefix = "\x01"

// tombstoneTTL is how long an invalidation's tombstone stays: far longer than any load (bounded by
// Policy.LoadTimeout, seconds) takes from its lookup to its fill, so a fill that read the source
// of truth before the change always finds the tombstone and loses.
const tombstoneTTL = time.Minute

// newToken returns a random token that tells one invalidation from every other.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ReadThrough is a Redis read-through cache for values of type V, one JSON string per key.
//
// A miss calls the loader through the shared read-through path (readThrough), so one process
// loads a key at most once at a time however many requests want it, on a context detached from
// the caller (with its own timeout). A loader returning domain.ErrNotFound is cached as a
// short-lived null marker. When Redis itself fails (not a miss), the value is loaded and served
// anyway, without trying to write it back. Failures to write the cache are logged, never returned.
//
// Fills cannot bring old data back. Delete does not remove an entry: it replaces it with a
// tombstone unique to that invalidation, which reads treat as a miss. A fill is written only if
// the key still holds exactly what the filler's lookup saw before it read the source of truth
// (nothing, or a given tombstone), checked and written in one script. So a load that read a row
// before a writer's commit, and whose fill lands after that writer's Delete, finds the writer's
// tombstone and is dropped, on every instance alike.
//
// An invalidation Redis did not take is written again until it lands (Policy.Repair, and this
// cache's next lookup); meanwhile this process reads the key as a miss and fills nothing into it.
type ReadThrough[V any] struct {
	rdb    redis.UniversalClient
	rt     *readThrough[V]
	repair repairSet // keys whose tombstone could not be written
	Stats  Stats
}

// NewReadThrough returns a read-through cache; name labels its log lines.
func NewReadThrough[V any](rdb redis.UniversalClient, name string, policy Policy, log *slog.Logger) *ReadThrough[V] {
	c := &ReadThrough[V]{rdb: rdb}
	c.rt = newReadThroughCore[V](name, policy, log, &c.Stats, c.lookup)
	policy.Repair.register(c.repairNow)
	return c
}

// Get returns the value under key, loading it with load on a miss.
func (c *ReadThrough[V]) Get(ctx context.Context, key string, load func(context.Context) (V, error)) (V, error) {
	var zero V
	if e, ok := c.rt.localHit(key); ok { // the hot path: no closure, slice or map
		if e.null {
			return zero, domain.ErrNotFound
		}
		return e.v, nil
	}
	got, err := c.rt.get(ctx, []string{key}, func(ctx context.Context, _ []string, seen map[string]string) (map[string]entry[V], error) {
		v, err := load(ctx)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			if seen != nil {
				c.fill(ctx, key, seen[key], nullMarker, c.rt.policy.NullTTL, c.rt.policy.NullTTL/4)
			}
			return map[string]entry[V]{key: {null: true}}, nil
		case err != nil:
			return nil, err
		}
		if seen != nil {
			if raw, err := json.Marshal(v); err != nil {
				c.rt.log.ErrorContext(ctx, "cache encode failed", "cache", c.rt.name, "key", key, "err", err)
			} else {
				c.fill(ctx, key, seen[key], string(raw), c.rt.policy.TTL, c.rt.policy.Jitter)
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

// GetMany returns the values under keys that exist, loading the misses with one call of load
// (keys load leaves out are cached as absent). Keys already being loaded by another caller are
// waited for, not loaded again.
func (c *ReadThrough[V]) GetMany(ctx context.Context, keys []string, load func(ctx context.Context, keys []string) (map[string]V, error)) (map[string]V, error) {
	got, err := c.rt.get(ctx, keys, func(ctx context.Context, missing []string, seen map[string]string) (map[string]entry[V], error) {
		vals, err := load(ctx, missing)
		if err != nil {
			return nil, err
		}
		out := make(map[string]entry[V], len(missing))
		for _, key := range missing {
			v, ok := vals[key]
			if !ok {
				if seen != nil {
					c.fill(ctx, key, seen[key], nullMarker, c.rt.policy.NullTTL, c.rt.policy.NullTTL/4)
				}
				out[key] = entry[V]{null: true}
				continue
			}
			if seen != nil {
				if raw, err := json.Marshal(v); err != nil {
					c.rt.log.ErrorContext(ctx, "cache encode failed", "cache", c.rt.name, "key", key, "err", err)
				} else {
					c.fill(ctx, key, seen[key], string(raw), c.rt.policy.TTL, c.rt.policy.Jitter)
				}
			}
			out[key] = entry[V]{v: v}
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]V, len(got))
	for key, e := range got {
		if !e.null {
			out[key] = e.v
		}
	}
	return out, nil
}

// Refresh invalidates key and loads it again at once, filling the entry under the same guard as
// any read (a warm-up after a write: the next readers hit a warm cache). It reads the source of
// truth after its own invalidation, so it can never store data older than the write that called
// it, nor overwrite a later writer's invalidation.
func (c *ReadThrough[V]) Refresh(ctx context.Context, key string, load func(context.Context) (V, error)) error {
	if err := c.Delete(ctx, key); err != nil {
		return err
	}
	_, err := c.Get(ctx, key, load)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	return err
}

// Preload loads key with load and stores it for ttl plus jitter, unless the key already holds a
// value or null marker (a guess that the key will be read soon). The fill is guarded like a read's:
// a change that lands between the lookup and the fill wins. An error from Redis or a load that
// finds nothing leaves nothing to do; other load errors are returned.
func (c *ReadThrough[V]) Preload(ctx context.Context, key string, ttl time.Duration, load func(context.Context) (V, error)) error {
	got, err := c.lookup(ctx, []string{key})
	if err != nil {
		return nil // Redis is failing: nothing to gain
	}
	seen, miss := got.seen[key]
	if !miss {
		return nil // already cached
	}
	v, err := load(fillContext(ctx, false, map[string]string{key: seen}))
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cache %s: encode: %w", c.rt.name, err)
	}
	c.rt.changing(key)
	defer c.rt.changed(key)
	c.fill(ctx, key, seen, string(raw), ttl, min(c.rt.policy.Jitter, ttl/4))
	return nil
}

// Delete invalidates keys: each entry is replaced by a tombstone of this invalidation (see
// ReadThrough). Callers write PostgreSQL first and then delete; when the tombstone cannot be
// written the keys are remembered and tombstoned once Redis answers (see Repairer), and the error
// is returned for the caller to log.
func (c *ReadThrough[V]) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	if err := c.tombstone(ctx, keys); err != nil {
		c.distrust(ctx, keys)
		return err
	}
	return nil
}

// DeleteAcked is Delete for a change that must be seen by the next read on any instance (the
// writer's next request may reach another one): it returns once every instance has confirmed
// that it dropped its in-process copies, or, when one did not confirm in time, once such copies
// have expired.
func (c *ReadThrough[V]) DeleteAcked(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	c.rt.changing(keys...)
	if err := c.tombstone(ctx, keys); err != nil {
		c.rt.changed(keys...)
		c.distrust(ctx, keys)
		return err
	}
	if !c.rt.changedAcked(deleteAckWait, keys...) && c.rt.policy.LocalTTL > 0 {
		c.Stats.Unconfirmed.Add(1)
		time.Sleep(c.rt.policy.LocalTTL)
	}
	return nil
}

// deleteAckWait is how long DeleteAcked waits for the instances' confirmations.
const deleteAckWait = 500 * time.Millisecond

func (c *ReadThrough[V]) tombstone(ctx context.Context, keys []string) error {
	tomb := tombstonePrefix + newToken()
	var err error
	if len(keys) == 1 {
		err = c.rdb.Set(ctx, keys[0], tomb, tombstoneTTL).Err()
	} else {
		// One SET per key, pipelined: on a Redis Cluster the keys may lie in different slots; go-redis
		// sends each node its share.
		_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Set(ctx, k, tomb, tombstoneTTL)
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("cache %s: delete: %w", c.rt.name, err)
	}
	return nil
}

// distrust remembers keys whose tombstone could not be written, for the repair.
func (c *ReadThrough[V]) distrust(ctx context.Context, keys []string) {
	for _, k := range keys {
		if !c.repair.add(k) {
			c.rt.log.WarnContext(ctx, "too many cache entries to repair; this one may stay stale until it expires", "cache", c.rt.name, "key", k)
		}
	}
	c.repair.failedAt.Store(time.Now().UnixNano())
	c.rt.policy.Repair.kick()
}

// repairNow tombstones the remembered keys (a new tombstone each time: the entry's value, and any
// fill guard taken before, are void) and returns how many are still waiting.
func (c *ReadThrough[V]) repairNow(ctx context.Context) int {
	if c.repair.size() == 0 {
		return 0
	}
	keys := c.repair.take()
	ctx = context.WithoutCancel(ctx)
	c.rt.changing(keys...)
	err := c.tombstone(ctx, keys)
	c.rt.changed(keys...)
	if err != nil {
		for _, k := range keys {
			c.repair.add(k)
		}
		c.repair.failedAt.Store(time.Now().UnixNano())
	}
	c.repair.settle(keys)
	return c.repair.size()
}

// repairBeforeRead writes the remembered tombstones before a lookup, unless a write just failed
// (the repairer is on it; a read during an outage should not wait for another failure).
func (c *ReadThrough[V]) repairBeforeRead(ctx context.Context) {
	if c.repair.size() > 0 && time.Since(time.Unix(0, c.repair.failedAt.Load())) >= repairReadPause {
		c.repairNow(ctx)
	}
}

// repairReadPause is how long after a failed write reads leave repairs to the repairer.
const repairReadPause = 500 * time.Millisecond

// unrepaired is the fill guard of a key whose invalidation has not landed: no value in Redis
// equals it, so nothing read now is filled over the stale entry.
const unrepaired = tombstonePrefix + "unrepaired"

// lookup reads keys with one GET each, pipelined when there are several (a pipeline, unlike MGET,
// may span cluster slots). A key whose invalidation has not landed yet is a miss whatever Redis
// holds.
func (c *ReadThrough[V]) lookup(ctx context.Context, keys []string) (observed[V], error) {
	c.repairBeforeRead(ctx)
	out := newObserved[V](len(keys))
	pending := c.repair.pendingAmong(keys)
	cmds := make([]*redis.StringCmd, len(keys))
	if len(keys) == 1 {
		cmds[0] = c.rdb.Get(ctx, keys[0])
	} else {
		pipe := c.rdb.Pipeline()
		for i, key := range keys {
			cmds[i] = pipe.Get(ctx, key)
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
	}
	for i, key := range keys {
		raw, err := cmds[i].Result()
		if err == nil && (pending[key] || c.repair.has(key)) {
			out.seen[key] = unrepaired
			continue
		}
		switch {
		case errors.Is(err, redis.Nil):
			out.seen[key] = ""
			continue
		case err != nil:
			if ctx.Err() == nil {
				c.rt.log.WarnContext(ctx, "cache read failed, serving from the database", "cache", c.rt.name, "key", key, "err", err)
			}
			return observed[V]{}, err
		case strings.HasPrefix(raw, tombstonePrefix):
			out.seen[key] = raw
			continue
		case raw == nullMarker:
			out.hits[key] = entry[V]{null: true}
			continue
		}
		var v V
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			// A value written by an older, incompatible version: a miss, and the fill replaces it.
			c.rt.log.WarnContext(ctx, "cache decode failed", "cache", c.rt.name, "key", key, "err", err)
			out.seen[key] = raw
			continue
		}
		out.hits[key] = entry[V]{v: v}
	}
	return out, nil
}

// fill stores value under key unless key no longer holds seen (see ReadThrough).
func (c *ReadThrough[V]) fill(ctx context.Context, key, seen, value string, ttl, jitter time.Duration) {
	exp := max(jittered(ttl, jitter).Milliseconds(), 1)
	stored, err := fillIfUnchanged.Run(ctx, c.rdb, []string{key}, seen, value, exp).Int()
	switch {
	case err != nil:
		c.rt.log.WarnContext(ctx, "cache write failed", "cache", c.rt.name, "key", key, "err", err)
	case stored == 0:
		c.rt.stats.FillsSkipped.Add(1)
	}
}
