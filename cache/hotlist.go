package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// HotListCache keeps the computed hot list at two levels: Redis (shared by every instance, TTL
// well above the ranking interval) and an in-process copy (an atomic pointer). Reads use the local
// copy while it is younger than LocalTTL, then Redis (refilling the local copy); when Redis fails
// or has nothing, the stale local copy is served: once any list was computed or fetched, a Redis
// problem never turns the hot list into an error.
type HotListCache struct {
	rdb      redis.UniversalClient
	key      string
	ttl      time.Duration
	localTTL time.Duration
	now      func() time.Time
	log      *slog.Logger
	local    atomic.Pointer[localHot]
	bcast    *Broadcaster
}

type localHot struct {
	list      domain.HotList
	fetchedAt time.Time
}

// HotListTTLs are the two lifetimes of the hot list.
type HotListTTLs struct {
	Redis time.Duration // keep several ranking intervals, so a few failed runs change nothing
	Local time.Duration // about one ranking interval
}

// NewHotListCache returns the cache on the given clock.
//
// A new list saved by any instance is broadcast (b, nil for none): the others' copies stop
// counting as fresh at once, and are not trusted as fresh while the broadcast is not subscribed.
func NewHotListCache(rdb redis.UniversalClient, ks Keyspace, ttls HotListTTLs, now func() time.Time, log *slog.Logger, b *Broadcaster) *HotListCache {
	c := &HotListCache{rdb: rdb, key: ks.Key("hot", "articles"), ttl: ttls.Redis, localTTL: ttls.Local, now: now, log: log, bcast: b}
	b.register(hotListTier{c})
	return c
}

// hotListTier lets the broadcaster age the process's copy: it stays as the fallback for a Redis
// outage, but the next read fetches the list from Redis.
type hotListTier struct{ c *HotListCache }

func (t hotListTier) delete(keys ...string) {
	for _, k := range keys {
		if k == t.c.key {
			t.flush()
			return
		}
	}
}

func (t hotListTier) flush() {
	if loc := t.c.local.Load(); loc != nil {
		t.c.local.CompareAndSwap(loc, &localHot{list: loc.list})
	}
}

type cachedHotEntry struct {
	Article  cachedArticle   `json:"article"`
	Author   domain.Profile  `json:"author"`
	Counters domain.Counters `json:"counters"`
	Score    float64         `json:"score"`
}

type cachedHotList struct {
	Entries    []cachedHotEntry `json:"entries"`
	ComputedAt time.Time        `json:"computedAt"`
}

// Save stores the list in Redis and in the process. The local copy is kept even if Redis fails,
// and the Redis error is returned for the job to record.
func (c *HotListCache) Save(ctx context.Context, l domain.HotList) error {
	c.local.Store(&localHot{list: l, fetchedAt: c.now()})
	enc := cachedHotList{Entries: make([]cachedHotEntry, len(l.Entries)), ComputedAt: l.ComputedAt}
	for i, e := range l.Entries {
		enc.Entries[i] = cachedHotEntry{Article: toCachedArticle(e.Article), Author: e.Author, Counters: e.Counters, Score: e.Score}
	}
	raw, err := json.Marshal(enc)
	if err != nil {
		return fmt.Errorf("hot list: encode: %w", err)
	}
	if err := c.rdb.Set(ctx, c.key, raw, c.ttl).Err(); err != nil {
		return fmt.Errorf("hot list: write: %w", err)
	}
	c.bcast.publish([]string{c.key})
	return nil
}

// Keep makes l the process's copy, as if just fetched, without writing Redis: a list rebuilt from
// PostgreSQL while Redis fails then serves the next reads as Load's stale copy does.
func (c *HotListCache) Keep(l domain.HotList) {
	c.local.Store(&localHot{list: l, fetchedAt: c.now()})
}

// Load returns the freshest list it can: domain.ErrNotFound only when no list exists anywhere.
func (c *HotListCache) Load(ctx context.Context) (domain.HotList, error) {
	loc := c.local.Load()
	if loc != nil && c.now().Sub(loc.fetchedAt) < c.localTTL && c.bcast.Subscribed() {
		return loc.list, nil
	}
	raw, err := c.rdb.Get(ctx, c.key).Bytes()
	switch {
	case err == nil:
		var dec cachedHotList
		jerr := json.Unmarshal(raw, &dec)
		if jerr == nil {
			l := domain.HotList{Entries: make([]domain.HotEntry, len(dec.Entries)), ComputedAt: dec.ComputedAt}
			for i, e := range dec.Entries {
				l.Entries[i] = domain.HotEntry{Article: e.Article.domain(), Author: e.Author, Counters: e.Counters, Score: e.Score}
			}
			c.local.Store(&localHot{list: l, fetchedAt: c.now()})
			return l, nil
		}
		c.log.WarnContext(ctx, "hot list in Redis is unreadable", "err", jerr)
	case errors.Is(err, redis.Nil):
	default:
		if loc != nil {
			c.log.WarnContext(ctx, "hot list read from Redis failed; serving the local copy", "err", err)
		} else {
			c.log.WarnContext(ctx, "hot list read from Redis failed and this process has no copy", "err", err)
		}
	}
	if loc != nil {
		return loc.list, nil
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		// Never computed here and Redis cannot say: a dependency outage (503), not a bug.
		return domain.HotList{}, fmt.Errorf("%w: hot list: read: %v", domain.ErrUnavailable, err)
	}
	return domain.HotList{}, domain.ErrNotFound
}
