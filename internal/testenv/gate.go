package testenv

import (
	"context"
	"sync"
	"testing"
)

// Gate holds whoever calls Wait until the test opens it, so a test can interleave goroutines
// deterministically: park a load mid-flight, act while it is parked, then let it go.
type Gate struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// NewGate returns a closed gate that opens when t ends, so a failed test never leaves a goroutine
// parked.
func NewGate(t testing.TB) *Gate {
	g := &Gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
	t.Cleanup(g.Open)
	return g
}

// Wait parks the caller until the gate opens or ctx ends (returning ctx's error).
func (g *Gate) Wait(ctx context.Context) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Entered receives when a caller has reached Wait: it holds at most one arrival not yet received,
// so with one caller it receives once.
func (g *Gate) Entered() <-chan struct{} { return g.entered }

// Open lets every parked and future caller of Wait through; opening twice is harmless.
func (g *Gate) Open() { g.once.Do(func() { close(g.release) }) }
