package job_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
)

// warmer is a fake warm function: it reports each slug it starts on entered, and holds it until
// released (or its context ends) when hold is set.
type warmer struct {
	hold    bool
	entered chan string
	release chan struct{}
	once    sync.Once

	mu   sync.Mutex
	done []string
	errs []error
}

func newWarmer(t *testing.T, hold bool) *warmer {
	w := &warmer{hold: hold, entered: make(chan string, 100), release: make(chan struct{})}
	t.Cleanup(w.open)
	return w
}

func (w *warmer) open() { w.once.Do(func() { close(w.release) }) }

func (w *warmer) warm(ctx context.Context, slug string) error {
	w.entered <- slug
	var err error
	if w.hold {
		select {
		case <-w.release:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done, w.errs = append(w.done, slug), append(w.errs, err)
	return err
}

func (w *warmer) results() ([]string, []error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.done), slices.Clone(w.errs)
}

// startPreloader runs p until the test ends (or stop is called); stop waits for Run to return.
func startPreloader(t *testing.T, p *job.Preloader) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := testenv.Recv(t, returned, "Run to return"); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func flush(t *testing.T, p *job.Preloader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func TestPreloader(t *testing.T) {
	t.Parallel()

	t.Run("every accepted preload runs, off the caller's goroutine", func(t *testing.T) {
		t.Parallel()
		w := newWarmer(t, false)
		p := job.NewPreloader(job.PreloadConfig{Queue: 8, Workers: 2}, w.warm, testenv.Logger(t))
		p.Preload("queued-before-run") // accepted before the server runs, warmed once it does
		startPreloader(t, p)
		p.Preload("a")
		p.Preload("b")
		flush(t, p)
		done, errs := w.results()
		slices.Sort(done)
		if !slices.Equal(done, []string{"a", "b", "queued-before-run"}) || slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatalf("warmed %v (%v), want a, b and queued-before-run without errors", done, errs)
		}
		if d, n := p.Stats.Dropped.Load(), p.Stats.Done.Load(); d != 0 || n != 3 {
			t.Errorf("Stats: %d dropped, %d done; want 0 and 3", d, n)
		}
	})

	t.Run("a full queue drops instead of blocking", func(t *testing.T) {
		t.Parallel()
		w := newWarmer(t, true)
		p := job.NewPreloader(job.PreloadConfig{Queue: 2, Workers: 1}, w.warm, testenv.Logger(t))
		startPreloader(t, p)
		p.Preload("running")
		testenv.Recv(t, w.entered, "the worker to take the first preload") // the only worker is busy
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			for _, s := range []string{"q1", "q2", "x1", "x2", "x3"} { // two fit in the queue
				p.Preload(s)
			}
		}()
		// Preload returns while the worker is still held: it never waits for room.
		testenv.Recv(t, returned, "the preloads to return while the queue was full")
		if d := p.Stats.Dropped.Load(); d != 3 {
			t.Fatalf("Dropped = %d, want 3", d)
		}
		w.open()
		flush(t, p)
		if done, _ := w.results(); !slices.Equal(done, []string{"running", "q1", "q2"}) {
			t.Fatalf("warmed %v, want running, q1, q2 (the dropped ones never run)", done)
		}
	})

	t.Run("stopping cancels the preloads under way and drops the queued ones", func(t *testing.T) {
		t.Parallel()
		w := newWarmer(t, true) // never released: only the stop ends it
		p := job.NewPreloader(job.PreloadConfig{Queue: 4, Workers: 1, Timeout: time.Hour}, w.warm, testenv.Logger(t))
		stop := startPreloader(t, p)
		p.Preload("running")
		testenv.Recv(t, w.entered, "the preload to start")
		p.Preload("queued")
		stop() // returns once Run has: the preload under way has ended
		done, errs := w.results()
		if !slices.Equal(done, []string{"running"}) || !errors.Is(errs[0], context.Canceled) {
			t.Fatalf("warmed %v with %v; want only running, cancelled by the stop", done, errs)
		}
		flush(t, p) // nothing is left pending
		p.Preload("after-stop")
		flush(t, p)
		if done, _ := w.results(); len(done) != 1 {
			t.Fatalf("warmed %v after the stop", done)
		}
		if d, f := p.Stats.Dropped.Load(), p.Stats.Failed.Load(); d != 1 || f != 0 {
			t.Errorf("Stats: %d dropped, %d failed; want 1 (the preload asked for after the stop) and 0 (a cancelled preload is no failure)", d, f)
		}
	})

	t.Run("each preload has its own timeout", func(t *testing.T) {
		t.Parallel()
		w := newWarmer(t, true) // never released: only the timeout ends each
		const timeout = 20 * time.Millisecond
		p := job.NewPreloader(job.PreloadConfig{Queue: 4, Workers: 1, Timeout: timeout}, w.warm, testenv.Logger(t))
		startPreloader(t, p)
		p.Preload("slow-1")
		p.Preload("slow-2")
		flush(t, p)
		done, errs := w.results()
		if !slices.Equal(done, []string{"slow-1", "slow-2"}) {
			t.Fatalf("warmed %v, want both: a timed-out preload frees its worker", done)
		}
		for i, err := range errs {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("preload %d ended with %v, want its deadline", i, err)
			}
		}
		if f := p.Stats.Failed.Load(); f != 2 {
			t.Errorf("Stats.Failed = %d, want 2", f)
		}
	})
}
