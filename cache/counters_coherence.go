package cache

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// repairSet remembers the hashes a change may be missing from (its write failed while Redis was
// failing), until they are marked suspect. Without it such a hash would show a wrong count until
// it expires.
type repairSet struct {
	n        atomic.Int64 // len(items), read without the lock on every counter read
	failedAt atomic.Int64 // unix nanoseconds of the last failed marking: wait a little before the next try
	mu       sync.Mutex
	items    map[string]struct{}
}

// maxRepairs bounds the memory a long Redis outage under many writes can take; hashes past it
// keep a stale count until they expire (and a warning says so).
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
	m.n.Store(int64(len(m.items)))
	return true
}

// take removes and returns every remembered hash.
func (m *repairSet) take() []string {
	if m.n.Load() == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.items))
	for k := range m.items {
		out = append(out, k)
	}
	clear(m.items)
	m.n.Store(0)
	return out
}

// distrust remembers hashes as possibly wrong: they are marked suspect once Redis answers again.
func (c *Counters) distrust(ctx context.Context, keys ...string) {
	for _, k := range keys {
		if !c.repair.add(k) {
			c.log.WarnContext(ctx, "too many counter hashes to repair; this one stays stale until it expires", "key", k)
		}
	}
}

// suspectDistrusted marks the distrusted hashes suspect and returns the token each got. Call it
// only right after Redis answered; what cannot be marked now is kept for later.
func (c *Counters) suspectDistrusted(ctx context.Context) map[string]string {
	if c.repair.n.Load() == 0 || time.Since(time.Unix(0, c.repair.failedAt.Load())) < 500*time.Millisecond {
		return nil // nothing to mark, or Redis just failed
	}
	keys := c.repair.take()
	tokens, err := c.suspectTokens(context.WithoutCancel(ctx), keys)
	if err != nil {
		c.distrust(ctx, keys...)
		c.repair.failedAt.Store(time.Now().UnixNano())
		c.log.WarnContext(ctx, "marking distrusted counter hashes failed; retrying later", "err", err)
		return nil
	}
	return tokens
}
