package job_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/job"
)

// passRecorder reports each recheck pass on a channel; the first one fails.
type passRecorder struct {
	n      int // written by the worker's goroutine only
	passes chan int
}

func (p *passRecorder) RecheckEmails(context.Context) (int, int, error) {
	p.n++
	n := p.n
	p.passes <- n
	if n == 1 {
		return 0, 0, errors.New("pg: connection refused")
	}
	return 1, 0, nil
}

// TestEmailRecheck_RunsAtStartAndOnEveryTick: the worker rechecks at once, again at every tick
// after a failed pass too, and stops with its context.
func TestEmailRecheck_RunsAtStartAndOnEveryTick(t *testing.T) {
	t.Parallel()
	rec := &passRecorder{passes: make(chan int, 3)}
	ticks := make(chan time.Time)
	var asked time.Duration
	w := job.NewEmailRecheck(rec, 5*time.Minute, func(d time.Duration) <-chan time.Time { asked = d; return ticks }, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	if n := <-rec.passes; n != 1 {
		t.Fatalf("first pass %d", n)
	}
	ticks <- time.Now()
	if n := <-rec.passes; n != 2 {
		t.Fatalf("pass after the first tick %d", n)
	}
	ticks <- time.Now()
	<-rec.passes
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if asked != 5*time.Minute {
		t.Fatalf("waited %v between passes, want 5m", asked)
	}
}
