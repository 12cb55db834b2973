package cache

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// feedMemo remembers, in process, each active reader's feed stamp, so a warm feed read costs a
// map lookup instead of a hash over every followed author's token. It is one more in-process
// tier: an entry goes when the reader's follow list or any followed author's token is dropped —
// by this process's own change (FeedStamps) or another instance's broadcast (delete, registered
// with the Broadcaster) — and after the tier's TTL at the latest; it is not used while the
// broadcast subscription is down. A stamp computed while any drop happened is not remembered
// (gen), so a memo never outlives a change it did not see.
type feedMemo struct {
	ttl       time.Duration
	max       int
	now       func() time.Time
	subscribe func() bool // the broadcast subscription is up

	tokenPrefix, followsPrefix string // the keys whose drops concern the memo

	mu       sync.Mutex
	gen      uint64
	byReader map[int64]memoEntry
	byAuthor map[int64]map[int64]struct{} // author -> readers whose entry holds them
	indexed  int                          // reader-author pairs in byAuthor
}

// maxMemoPairs bounds the memo's index (reader-author pairs, ~50 bytes each): 10,000 active
// readers following 500 authors each would otherwise hold 5 million. Past it the memo starts
// over, and its readers fall back to the hash over their followed authors' tokens.
const maxMemoPairs = 500_000

type memoEntry struct {
	stamp    int64
	followed []int64
	expires  time.Time
}

func newFeedMemo(ttl time.Duration, max int, subscribed func() bool, tokenPrefix, followsPrefix string) *feedMemo {
	if max <= 0 {
		max = 10_000
	}
	return &feedMemo{ttl: ttl, max: max, now: time.Now, subscribe: subscribed, tokenPrefix: tokenPrefix, followsPrefix: followsPrefix,
		byReader: map[int64]memoEntry{}, byAuthor: map[int64]map[int64]struct{}{}}
}

// get returns reader's remembered stamp, and the generation a computation started now runs in.
func (m *feedMemo) get(reader int64) (stamp int64, followed int, ok bool, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byReader[reader]
	if ok && m.subscribe() && m.now().Before(e.expires) {
		return e.stamp, len(e.followed), true, m.gen
	}
	return 0, 0, false, m.gen
}

// put remembers a stamp computed in generation gen, unless something was dropped since.
func (m *feedMemo) put(reader int64, gen uint64, stamp int64, followed []int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen || !m.subscribe() {
		return
	}
	if _, had := m.byReader[reader]; had {
		m.dropReaderLocked(reader)
	}
	if len(m.byReader) >= m.max || m.indexed+len(followed) > maxMemoPairs {
		m.clearLocked() // rare: more active readers than the tier holds; start over
	}
	if len(followed) > maxMemoPairs {
		return
	}
	m.indexed += len(followed)
	m.byReader[reader] = memoEntry{stamp: stamp, followed: followed, expires: m.now().Add(m.ttl)}
	for _, a := range followed {
		rs := m.byAuthor[a]
		if rs == nil {
			rs = map[int64]struct{}{}
			m.byAuthor[a] = rs
		}
		rs[reader] = struct{}{}
	}
}

// authorChanged forgets every stamp holding author.
func (m *feedMemo) authorChanged(author int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	for r := range m.byAuthor[author] {
		m.dropReaderLocked(r)
	}
}

// followsChanged forgets reader's stamp.
func (m *feedMemo) followsChanged(reader int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.dropReaderLocked(reader)
}

func (m *feedMemo) dropReaderLocked(reader int64) {
	e, ok := m.byReader[reader]
	if !ok {
		return
	}
	delete(m.byReader, reader)
	m.indexed -= len(e.followed)
	for _, a := range e.followed {
		if rs := m.byAuthor[a]; rs != nil {
			delete(rs, reader)
			if len(rs) == 0 {
				delete(m.byAuthor, a)
			}
		}
	}
}

func (m *feedMemo) clearLocked() {
	m.byReader = map[int64]memoEntry{}
	m.byAuthor = map[int64]map[int64]struct{}{}
	m.indexed = 0
}

// delete is the Broadcaster's: another instance dropped keys.
func (m *feedMemo) delete(keys ...string) {
	for _, k := range keys {
		if id, ok := idAfter(k, m.tokenPrefix); ok {
			m.authorChanged(id)
		} else if id, ok := idAfter(k, m.followsPrefix); ok {
			m.followsChanged(id)
		}
	}
}

// flush is the Broadcaster's: anything may have changed.
func (m *feedMemo) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.clearLocked()
}

func idAfter(key, prefix string) (int64, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}
