package cache

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// changeLog tracks the count changes under way in this process (likes, collects, reads), from
// before their commit until their increment of the hash is done, so that a load that refills a
// hash can tell whether one raced it: a change raced a load when it was still under way after the
// load began (in flight now, or ended since).
//
// Changes and loads are ordered by a sequence number, not a clock: every end of a change takes the
// next one, and a load notes the current one before it reads PostgreSQL.
type changeLog struct {
	mu        sync.Mutex
	seq       uint64
	items     map[string]*changeState
	lastSweep time.Time
}

type changeState struct {
	inFlight int
	lastEnd  uint64    // seq of the latest end
	endedAt  time.Time // when it ended, to forget idle items
}

// changeIdle is how long an ended change is remembered: longer than any load takes (loads are
// bounded by Policy.LoadTimeout, seconds).
const changeIdle = time.Minute

// mark returns the point a load begins at.
func (l *changeLog) mark() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// begin records the start of a change of each of keys.
func (l *changeLog) begin(keys []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.items == nil {
		l.items = make(map[string]*changeState)
	}
	now := time.Now()
	// Forget items idle for a while, sweeping at most every 10 s so that a read batch touching
	// thousands of articles does not scan the map for each.
	if len(l.items) >= 10000 && now.Sub(l.lastSweep) > 10*time.Second {
		l.lastSweep = now
		for k, st := range l.items {
			if st.inFlight == 0 && now.Sub(st.endedAt) > changeIdle {
				delete(l.items, k)
			}
		}
	}
	for _, k := range keys {
		st := l.items[k]
		if st == nil {
			st = &changeState{}
			l.items[k] = st
		}
		st.inFlight++
	}
}

// end records the end of the changes begin recorded for keys.
func (l *changeLog) end(keys []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	now := time.Now()
	for _, k := range keys {
		if st := l.items[k]; st != nil {
			st.inFlight--
			st.lastEnd, st.endedAt = l.seq, now
		}
	}
}

// raced returns the keys among keys with a change under way now, or ended after since.
func (l *changeLog) raced(keys []string, since uint64) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, k := range keys {
		if st := l.items[k]; st != nil && (st.inFlight > 0 || st.lastEnd > since) {
			out = append(out, k)
		}
	}
	return out
}

// repairSet remembers the hashes that may be wrong, until they are dropped. Without it a hash
// missed by an increment (Redis down or timing out) or a change whose commit outcome is unknown
// would show a wrong count until it expires.
type repairSet struct {
	n        atomic.Int64 // len(items), read without the lock on every counter read
	failedAt atomic.Int64 // unix nanoseconds of the last failed drop: wait a little before the next try
	mu       sync.Mutex
	items    map[string]bool // true: drop only once PostgreSQL answers (the hash serves reads until then)
}

// maxRepairs bounds the memory a long Redis outage under many writes can take; hashes past it
// keep a stale count until they expire (and a warning says so).
const maxRepairs = 100000

func (m *repairSet) add(key string, afterPostgres bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = make(map[string]bool)
	}
	if _, ok := m.items[key]; !ok && len(m.items) >= maxRepairs {
		return false
	}
	m.items[key] = m.items[key] || afterPostgres
	m.n.Store(int64(len(m.items)))
	return true
}

// take removes and returns the hashes that may be dropped now: all when PostgreSQL has just
// answered, else those that only waited for Redis.
func (m *repairSet) take(postgresUp bool) map[string]bool {
	if m.n.Load() == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]bool)
	for k, afterPostgres := range m.items {
		if postgresUp || !afterPostgres {
			out[k] = afterPostgres
			delete(m.items, k)
		}
	}
	m.n.Store(int64(len(m.items)))
	return out
}

// distrust marks a hash as possibly wrong: it is dropped once Redis answers again (and, with
// afterPostgres, PostgreSQL too).
func (c *Counters) distrust(ctx context.Context, key string, afterPostgres bool) {
	if !c.repair.add(key, afterPostgres) {
		c.log.WarnContext(ctx, "too many counter hashes to repair; this one stays stale until it expires", "key", key)
	}
}

// dropDistrusted drops the distrusted hashes and returns those it dropped. Call it only right
// after Redis answered, and with postgresUp only right after PostgreSQL did too; what cannot be
// dropped now is kept for later.
func (c *Counters) dropDistrusted(ctx context.Context, postgresUp bool) map[string]bool {
	if c.repair.n.Load() == 0 || time.Since(time.Unix(0, c.repair.failedAt.Load())) < 500*time.Millisecond {
		return nil // nothing to drop, or Redis just failed
	}
	ctx = context.WithoutCancel(ctx)
	items := c.repair.take(postgresUp)
	dropped := make(map[string]bool, len(items))
	var failed error
	for k, afterPostgres := range items {
		if failed == nil {
			failed = c.drop(ctx, k)
		}
		if failed != nil {
			c.distrust(ctx, k, afterPostgres)
			continue
		}
		dropped[k] = true
	}
	if failed != nil {
		c.repair.failedAt.Store(time.Now().UnixNano())
		c.log.WarnContext(ctx, "dropping distrusted counter hashes failed; retrying later", "err", failed)
	}
	return dropped
}
