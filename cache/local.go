package cache

import (
	"hash/maphash"
	"sync"
	"time"
)

// local is a small in-process tier in front of Redis: a hot entry read many times a second costs
// no network round trip for LocalTTL. It is bounded (when full, a slice of entries is evicted)
// and short-lived, because other instances' writes only reach it by expiry; this instance's own
// writes delete from it at once.
//
// A read that fetched a value from Redis (or PostgreSQL) before this instance's write deleted the
// key must not store that older value after the delete. So readers take a stamp before they
// fetch and store only if no delete touched the key's stripe since (setIfUnchanged): the stripes
// keep the bookkeeping bounded, at the price of a rare needless miss when two keys share one.
type local[V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[string]localEntry[V]
	epochs  [localStripes]uint64 // bumped by every delete of a key in the stripe
}

const localStripes = 256

var localSeed = maphash.MakeSeed()

func stripe(key string) int { return int(maphash.String(localSeed, key) % localStripes) }

type localEntry[V any] struct {
	v       V
	null    bool
	expires time.Time
}

func newLocal[V any](ttl time.Duration, max int) *local[V] {
	if max <= 0 {
		max = 10_000
	}
	l := &local[V]{ttl: ttl, max: max, now: time.Now, entries: make(map[string]localEntry[V])}
	// Epochs start at 1, so the zero stamp — a read that did not look in the tier because it was
	// not in use (see Broadcaster) — never stores what it fetched.
	for i := range l.epochs {
		l.epochs[i] = 1
	}
	return l
}

// get returns key's live entry; on a miss it returns the stamp to fetch the value under (see
// setIfUnchanged), taken in the same critical section.
func (l *local[V]) get(key string) (e localEntry[V], ok bool, stamp uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok = l.entries[key]
	if ok && !l.now().After(e.expires) {
		return e, true, 0
	}
	if ok {
		delete(l.entries, key)
	}
	return localEntry[V]{}, false, l.epochs[stripe(key)]
}

// setIfUnchanged stores a fetched value unless a delete touched key's stripe after stamp was
// taken (the value may predate this instance's own write).
func (l *local[V]) setIfUnchanged(key string, v V, null bool, stamp uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epochs[stripe(key)] != stamp {
		return
	}
	l.store(key, v, null)
}

// setUntilIfUnchanged is setIfUnchanged for an entry that must not outlive expires (when that
// comes before the tier's TTL would end it).
func (l *local[V]) setUntilIfUnchanged(key string, v V, stamp uint64, expires time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epochs[stripe(key)] != stamp {
		return
	}
	l.store(key, v, false)
	if e := l.entries[key]; expires.Before(e.expires) {
		e.expires = expires
		l.entries[key] = e
	}
}

func (l *local[V]) store(key string, v V, null bool) {
	if len(l.entries) >= l.max {
		// Evict about a tenth, in map order (random enough); cheaper than keeping an LRU list.
		n := l.max / 10
		for k := range l.entries {
			delete(l.entries, k)
			if n--; n <= 0 {
				break
			}
		}
	}
	l.entries[key] = localEntry[V]{v: v, null: null, expires: l.now().Add(l.ttl)}
}

func (l *local[V]) delete(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.entries, k)
		l.epochs[stripe(k)]++
	}
}

// flush drops every entry, and reads under way store nothing they fetched before (as if every key
// had been deleted).
func (l *local[V]) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.entries)
	for i := range l.epochs {
		l.epochs[i]++
	}
}
