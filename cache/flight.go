package cache

import "sync"

// flights is a batch-aware singleflight: a process loads each key at most once at a time, however
// many callers want it and however their batches overlap. A caller asking for a batch joins the
// loads already under way for some of its keys and starts one load for all the others, so a
// batch costs at most one load of its own and no key is loaded by two loads at once.
//
// A load runs in a goroutine of its own: a caller that gives up stops waiting, the load goes on
// for the others. Its keys stay registered until it has returned — so a load that writes its
// result back to Redis before returning leaves no moment in which a key is neither in flight nor
// cached.
type flights[V any] struct {
	mu sync.Mutex
	m  map[string]*flight[V]
}

// flight is one load of a batch of keys.
type flight[V any] struct {
	done chan struct{} // closed once vals and err are set
	vals map[string]entry[V]
	err  error
}

// wait is one flight a caller waits on, and which of its keys that caller wants.
type wait[V any] struct {
	f      *flight[V]
	keys   []string
	joined bool // started by another caller
}

// do registers a load of keys: those already in flight are joined, the rest (if any) are loaded
// by one new flight that runs load(rest) in its own goroutine. keys must not repeat. It returns
// what to wait on, the joined flights first.
func (g *flights[V]) do(keys []string, load func(keys []string) (map[string]entry[V], error)) []wait[V] {
	g.mu.Lock()
	if g.m == nil {
		g.m = make(map[string]*flight[V])
	}
	var waits []wait[V]
	index := make(map[*flight[V]]int)
	var rest []string
	for _, k := range keys {
		f, ok := g.m[k]
		if !ok {
			rest = append(rest, k)
			continue
		}
		i, seen := index[f]
		if !seen {
			i = len(waits)
			index[f] = i
			waits = append(waits, wait[V]{f: f, joined: true})
		}
		waits[i].keys = append(waits[i].keys, k)
	}
	var mine *flight[V]
	if len(rest) > 0 {
		mine = &flight[V]{done: make(chan struct{})}
		for _, k := range rest {
			g.m[k] = mine
		}
		waits = append(waits, wait[V]{f: mine, keys: rest})
	}
	g.mu.Unlock()

	if mine != nil {
		go func() {
			defer func() {
				g.mu.Lock()
				for _, k := range rest {
					if g.m[k] == mine {
						delete(g.m, k)
					}
				}
				g.mu.Unlock()
				close(mine.done)
			}()
			mine.vals, mine.err = load(rest)
		}()
	}
	return waits
}
