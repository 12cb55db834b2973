package repository

import (
	"context"
	"sync"
	"time"
)

// keyedBatcher runs the requests for one key (an article, an item) that arrive while an earlier
// batch for that key is running as ONE batch: one statement and one commit for all of them.
//
// Why: writes to one hot row queue on its lock, each holding it until its commit has reached the
// disk. One commit per batch instead of per request divides that wait, and every per-statement
// cost after it (triggers, cache updates, broadcasts), by the batch's size, while a request alone
// still goes at once: a batch starts as soon as the previous one for its key ends, never on a
// timer.
//
// Per key at most one batch runs at a time in a process; requests arriving meanwhile join the next
// batch, which the finishing run starts. Instances batch on their own and queue on the row.
type keyedBatcher[K comparable, In, Out any] struct {
	// run carries out one batch and returns each item's result, in the order of items; errs is
	// nil when every item succeeded. It runs detached from the callers' cancellation (a batch
	// carries several callers' requests), under timeout.
	run     func(ctx context.Context, key K, items []In) (outs []Out, errs []error)
	max     int
	timeout time.Duration

	mu      sync.Mutex
	running map[K]bool              // a key whose batch is being run
	next    map[K]*batchOf[In, Out] // the batch collecting behind it
}

// batchOf is one batch's items and, once done is closed, its outcome.
type batchOf[In, Out any] struct {
	items []In
	done  chan struct{}
	outs  []Out   // in the order of items
	errs  []error // nil, or each item's error
}

func newKeyedBatcher[K comparable, In, Out any](max int, timeout time.Duration, run func(ctx context.Context, key K, items []In) ([]Out, []error)) *keyedBatcher[K, In, Out] {
	return &keyedBatcher[K, In, Out]{run: run, max: max, timeout: timeout, running: map[K]bool{}, next: map[K]*batchOf[In, Out]{}}
}

// add runs item with the others for key arriving meanwhile and returns its result.
func (b *keyedBatcher[K, In, Out]) add(ctx context.Context, key K, item In) (Out, error) {
	b.mu.Lock()
	batch := b.next[key]
	if batch != nil && len(batch.items) == b.max {
		b.mu.Unlock() // the next batch is full: this one goes alone, queueing on the row
		outs, errs := b.run(ctx, key, []In{item})
		return itemResult(outs, errs, 0)
	}
	if batch == nil {
		batch = &batchOf[In, Out]{done: make(chan struct{})}
		b.next[key] = batch
	}
	i := len(batch.items)
	batch.items = append(batch.items, item)
	lead := !b.running[key]
	if lead {
		b.running[key] = true
		delete(b.next, key)
	}
	b.mu.Unlock()

	if lead {
		b.runBatch(ctx, key, batch)
		// Requests that arrived while this batch ran go in a run of their own, so this caller
		// answers now.
		go b.drain(ctx, key)
	}
	<-batch.done
	return itemResult(batch.outs, batch.errs, i)
}

// drain runs the batches that collected behind a finished one, until none is waiting.
func (b *keyedBatcher[K, In, Out]) drain(ctx context.Context, key K) {
	for {
		b.mu.Lock()
		batch := b.next[key]
		if batch == nil {
			delete(b.running, key)
			b.mu.Unlock()
			return
		}
		delete(b.next, key)
		b.mu.Unlock()
		b.runBatch(ctx, key, batch)
	}
}

func (b *keyedBatcher[K, In, Out]) runBatch(ctx context.Context, key K, batch *batchOf[In, Out]) {
	defer close(batch.done)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.timeout)
	defer cancel()
	batch.outs, batch.errs = b.run(sctx, key, batch.items)
}

func itemResult[Out any](outs []Out, errs []error, i int) (Out, error) {
	var zero Out
	if errs != nil && errs[i] != nil {
		return zero, errs[i]
	}
	if i >= len(outs) {
		return zero, nil
	}
	return outs[i], nil
}
