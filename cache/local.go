package cache

import (
	"sync"
	"time"
)

// local is a small in-process tier in front of Redis: a hot entry read many times a second costs
// no network round trip for LocalTTL. It is bounded (when full, a slice of entries is evicted)
// and short-lived, because other instances' writes only reach it by expiry; this instance's own
// writes delete from it at once.
type local[V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[string]localEntry[V]
}

type localEntry[V any] struct {
	v       V
	null    bool
	expires time.Time
}

func newLocal[V any](ttl time.Duration, max int) *local[V] {
	if max <= 0 {
		max = 10_000
	}
	return &local[V]{ttl: ttl, max: max, now: time.Now, entries: make(map[string]localEntry[V])}
}

func (l *local[V]) get(key string) (localEntry[V], bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	if !ok {
		return e, false
	}
	if l.now().After(e.expires) {
		delete(l.entries, key)
		return e, false
	}
	return e, true
}

func (l *local[V]) set(key string, v V, null bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
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
	}
}
