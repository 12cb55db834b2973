package events

import "sync"

// historyWindow remembers which (reader, article) pairs have sent a read event since the last
// flush of the aggregator. A reader's history keeps one row per article with the latest read
// time, so a second read of the same article inside one window would only move that time by less
// than the window: it is counted in the tally instead, and the stream, the history consumer and
// PostgreSQL do not see it.
type historyWindow struct {
	max    int // pairs a shard remembers; past it every read goes out as its own event
	shards [historyShards]historyShard
}

const historyShards = 32

type readPair struct{ reader, article int64 }

// historyShard is one stripe of the window; the padding keeps two stripes' locks off one cache
// line.
type historyShard struct {
	mu   sync.Mutex
	seen map[readPair]struct{}
	_    [48]byte
}

func newHistoryWindow(maxPairs int) *historyWindow {
	w := &historyWindow{max: max(1, maxPairs/historyShards)}
	for i := range w.shards {
		w.shards[i].seen = make(map[readPair]struct{})
	}
	return w
}

// first reports whether reader has not read article since the last reset, and remembers that it
// now has. A full stripe forgets nothing and reports true: the read then costs what it did before
// the window existed, never a lost history entry.
func (w *historyWindow) first(reader, article int64) bool {
	p := readPair{reader, article}
	s := &w.shards[uint64(reader)*0x9e3779b97f4a7c15>>59%historyShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[p]; ok {
		return false
	}
	if len(s.seen) < w.max {
		s.seen[p] = struct{}{}
	}
	return true
}

// reset starts a new window.
func (w *historyWindow) reset() {
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		if len(s.seen) > 4*maxSpare { // a burst: let the big map go
			s.seen = make(map[readPair]struct{})
		} else {
			clear(s.seen)
		}
		s.mu.Unlock()
	}
}
