package events

import (
	"math/rand/v2"
	"sync"
)

// tallyShards stripes the tally. A read's stripe is one of spread stripes picked by its article
// (so each article lives in a few small maps that stay in cache, not in all of them) and at
// random among those (so the readers of one hot article do not all queue on one lock).
const (
	tallyShards = 64
	spread      = 4
)

// maxSpare is the largest drained map kept for reuse.
const maxSpare = 1024

// tallyShard is one stripe: its lock is held for a map increment only. The padding keeps two
// stripes' locks off one cache line.
type tallyShard struct {
	mu     sync.Mutex
	counts map[int64]int64
	reads  int // reads added since the last drain
	_      [40]byte
}

// tally counts reads per article in process until a drain takes them.
type tally struct {
	shards [tallyShards]tallyShard
	// spares are the maps the last drain emptied, handed back to the stripes at the next drain so
	// steady reading allocates nothing. Only the drainer touches them.
	spares [tallyShards]map[int64]int64
}

func newTally() *tally {
	t := &tally{}
	for i := range t.shards {
		t.shards[i].counts = make(map[int64]int64)
	}
	return t
}

// add counts one read of article and says whether its stripe now holds limit reads (exactly, so
// a full stripe reports once per drain).
func (t *tally) add(article int64, limit int) (full bool) {
	home := uint64(article) * 0x9e3779b97f4a7c15 >> 58 // Fibonacci hashing: the top 6 bits
	s := &t.shards[(home+uint64(rand.Uint32()%spread))%tallyShards]
	s.mu.Lock()
	s.counts[article]++
	s.reads++
	full = s.reads == limit
	s.mu.Unlock()
	return full
}

// drain moves every stripe's counts into into (per article sums). Reads added while it runs land
// either in this drain or in the next one, never in neither: each stripe is swapped under its lock.
func (t *tally) drain(into map[int64]int64) {
	for i := range t.shards {
		s := &t.shards[i]
		spare := t.spares[i]
		if spare == nil {
			spare = make(map[int64]int64)
		}
		s.mu.Lock()
		taken := s.counts
		s.counts, s.reads = spare, 0
		s.mu.Unlock()
		for article, n := range taken {
			into[article] += n
		}
		if len(taken) > maxSpare { // a burst over many articles: let the big map go
			taken = nil
		} else {
			clear(taken)
		}
		t.spares[i] = taken
	}
}
