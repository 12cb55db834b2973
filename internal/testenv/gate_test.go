package testenv

import (
	"context"
	"errors"
	"testing"
)

func TestGate_HoldsUntilOpened(t *testing.T) {
	t.Parallel()
	g := NewGate(t)
	passed := make(chan error, 1)
	go func() { passed <- g.Wait(context.Background()) }()
	Recv(t, g.Entered(), "the caller to reach the gate")
	select {
	case err := <-passed:
		t.Fatalf("the caller passed the closed gate (err %v)", err)
	default:
	}
	g.Open()
	g.Open() // harmless, as the cleanup opens it again
	if err := Recv(t, passed, "the caller to pass the open gate"); err != nil {
		t.Errorf("Wait after Open = %v, want nil", err)
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Errorf("Wait on the open gate = %v, want nil", err)
	}
}

func TestGate_WaitEndsWithItsContext(t *testing.T) {
	t.Parallel()
	g := NewGate(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestGate_OpensWhenTheTestEnds(t *testing.T) {
	t.Parallel()
	var g *Gate
	t.Run("inner", func(t *testing.T) { g = NewGate(t) })
	if err := g.Wait(context.Background()); err != nil {
		t.Errorf("Wait after the test ended = %v, want nil", err)
	}
}
