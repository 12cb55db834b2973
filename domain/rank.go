package domain

import (
	"container/heap"
	"math"
	"time"
)

// HotScore is the Hacker News ranking: (likes - 1) / (hours since publishing + 2)^1.5. The -1
// discounts the author's own like; the +2 keeps brand-new articles from dividing by almost zero.
func HotScore(likes int64, hoursSincePublish float64) float64 {
	if hoursSincePublish < 0 {
		hoursSincePublish = 0
	}
	return float64(likes-1) / math.Pow(hoursSincePublish+2, 1.5)
}

// HoursSince returns the hours from t to now as a float.
func HoursSince(t, now time.Time) float64 { return now.Sub(t).Hours() }

// Candidate is what the ranking scan reads of an article: enough to score it.
type Candidate struct {
	ID          int64
	PublishedAt time.Time
}

// Scored is a scored candidate of the hot list.
type Scored struct {
	ID    int64
	Likes int64
	Score float64
}

// TopN keeps the n highest-scoring candidates seen so far in a min-heap: the weakest kept candidate
// sits at the root, so a newcomer is compared with it once and replaces it only when it scores
// higher. Offering m candidates costs O(m log n) time and O(n) memory.
type TopN struct {
	n int
	h scoredHeap
}

// NewTopN keeps at most n candidates (none when n ≤ 0).
func NewTopN(n int) *TopN { return &TopN{n: n, h: make(scoredHeap, 0, max(n, 0))} }

// Offer considers one candidate.
func (t *TopN) Offer(s Scored) {
	if t.n <= 0 {
		return
	}
	if len(t.h) < t.n {
		heap.Push(&t.h, s)
		return
	}
	if less(t.h[0], s) {
		t.h[0] = s
		heap.Fix(&t.h, 0)
	}
}

// Len is the number of candidates kept.
func (t *TopN) Len() int { return len(t.h) }

// Sorted returns the kept candidates, best first. It empties the TopN.
func (t *TopN) Sorted() []Scored {
	out := make([]Scored, len(t.h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&t.h).(Scored)
	}
	return out
}

// less orders candidates by score, then (for a total, deterministic order) newer id first.
func less(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID < b.ID
}

type scoredHeap []Scored

func (h scoredHeap) Len() int           { return len(h) }
func (h scoredHeap) Less(i, j int) bool { return less(h[i], h[j]) }
func (h scoredHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoredHeap) Push(x any)        { *h = append(*h, x.(Scored)) }
func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// HotEntry is one article of the computed hot list: everything its response needs.
type HotEntry struct {
	Article  Article // summary, no body
	Author   Profile // Following is always false here; it depends on the viewer
	Counters Counters
	Score    float64
}

// HotList is the result of one ranking pass.
type HotList struct {
	Entries    []HotEntry
	ComputedAt time.Time
}

// Ranking is a ranking pass's result as the system of record keeps it: the listed articles best
// first, with the like counts and scores they were ranked by.
type Ranking struct {
	Entries  []Scored
	RankedAt time.Time
}
