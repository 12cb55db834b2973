package job

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// PreloadConfig sizes a Preloader.
type PreloadConfig struct {
	Queue   int           // preloads waiting for a worker; one more is dropped (at least 1)
	Workers int           // preloads running at once (at least 1)
	Timeout time.Duration // bound of one preload (default 2 s)
}

// Preloader warms caches off the request path (service.ArticlePreloader). Preload never blocks:
// the slug goes into a fixed queue, or is dropped and counted when the queue is full. A fixed
// number of workers take slugs from the queue and run warm on each, bounded by its own timeout.
// The preloads belong to the server, not to the request that asked for them: Run starts the
// workers and, when its context ends, cancels the preloads under way, waits for them and drops
// what is still queued. A preload is a bet, so failures are only logged.
type Preloader struct {
	cfg   PreloadConfig
	warm  func(ctx context.Context, slug string) error
	log   *slog.Logger
	queue chan string

	Stats PreloadStats

	mu      sync.Mutex
	stopped bool
	pending int           // queued or running
	idle    chan struct{} // closed while pending is 0
}

// PreloadStats counts what a Preloader did. Values only grow.
type PreloadStats struct {
	Done    atomic.Int64 // preloads that ran to the end, whatever they found
	Failed  atomic.Int64 // preloads that failed or timed out (not those the stop cancelled)
	Dropped atomic.Int64 // preloads refused: the queue was full, or the preloader had stopped
}

// NewPreloader returns a preloader that runs warm(ctx, slug) for every slug it accepts, once Run
// is running.
func NewPreloader(cfg PreloadConfig, warm func(ctx context.Context, slug string) error, log *slog.Logger) *Preloader {
	cfg.Queue, cfg.Workers = max(cfg.Queue, 1), max(cfg.Workers, 1)
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	idle := make(chan struct{})
	close(idle)
	return &Preloader{cfg: cfg, warm: warm, log: log, queue: make(chan string, cfg.Queue), idle: idle}
}

// Preload queues slug for warming, or drops it when the queue is full or the preloader has
// stopped. It returns at once either way.
func (p *Preloader) Preload(slug string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		p.Stats.Dropped.Add(1)
		return
	}
	select {
	case p.queue <- slug:
		if p.pending++; p.pending == 1 {
			p.idle = make(chan struct{})
		}
	default:
		p.Stats.Dropped.Add(1)
		p.log.Debug("preload queue full; preload dropped", "slug", slug)
	}
}

// Run runs the workers until ctx ends, then cancels the preloads under way, waits for them and
// drops the queued ones. It returns nil.
func (p *Preloader) Run(ctx context.Context) error {
	var workers sync.WaitGroup
	for range p.cfg.Workers {
		workers.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case slug := <-p.queue:
					p.run(ctx, slug)
				}
			}
		})
	}
	<-ctx.Done()
	workers.Wait()
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	for {
		select {
		case <-p.queue:
			p.finished()
		default:
			return nil
		}
	}
}

// Flush waits until no preload is queued or running (tests; a drain before looking at a cache).
func (p *Preloader) Flush(ctx context.Context) error {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Preloader) run(ctx context.Context, slug string) {
	defer p.finished()
	if ctx.Err() != nil {
		return // stopping: what a worker picked up as it stopped is dropped
	}
	pctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	switch err := p.warm(pctx, slug); {
	case err == nil:
		p.Stats.Done.Add(1)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil: // the server is stopping
	default:
		p.Stats.Failed.Add(1)
		p.log.Debug("preload failed", "slug", slug, "err", err)
	}
}

func (p *Preloader) finished() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending--; p.pending == 0 {
		close(p.idle)
	}
}
