package events

import "sync"

// historyWindow remembers, for each reader who has sent a read event since the last flush of the
// aggregator, the article of their latest one. A reader's history keeps one row per article with
// the latest read time, ordered by it: reading the article one has just read again, inside one
// window, moves that time by less than the window and changes no order, so it is counted in the
// tally instead and the stream, the history consumer and PostgreSQL do not see it. Reading
// another article in between (A, B, A) does change the order, so each of those goes out.
type historyWindow struct {
	max    int // readers a shard remembers; past it every read goes out as its own event
	shards [historyShards]historyShard
}

const historyShards = 32

// historyShard is one stripe of the window; the padding keeps two stripes' locks off one cache
// line.
type historyShard struct {
	mu     sync.Mutex
	latest map[int64]int64 // reader → article of their latest read event in this window
	_      [48]byte
}

func newHistoryWindow(maxReaders int) *historyWindow {
	w := &historyWindow{max: max(1, maxReaders/historyShards)}
	for i := range w.shards {
		w.shards[i].latest = make(map[int64]int64)
	}
	return w
}

// sends reports whether this read of article by reader must go out as an event (it is not a repeat
// of the reader's latest one in this window), and remembers it. A full stripe reports true for a
// reader it does not know: the read then costs what it did before the window existed, never a
// lost or misordered history entry.
func (w *historyWindow) sends(reader, article int64) bool {
	s := &w.shards[uint64(reader)*0x9e3779b97f4a7c15>>59%historyShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	last, known := s.latest[reader]
	if known && last == article {
		return false
	}
	if known || len(s.latest) < w.max {
		s.latest[reader] = article
	}
	return true
}

// reset starts a new window.
func (w *historyWindow) reset() {
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		if len(s.latest) > 4*maxSpare { // a burst: let the big map go
			s.latest = make(map[int64]int64)
		} else {
			clear(s.latest)
		}
		s.mu.Unlock()
	}
}
