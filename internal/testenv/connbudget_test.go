package testenv

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestConnBudget(t *testing.T) {
	t.Parallel()

	t.Run("a connection over the budget waits for one to close", func(t *testing.T) {
		t.Parallel()
		b := &connBudget{dir: t.TempDir(), slots: 2}
		first, err := b.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		second, err := b.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			third, err := b.acquire(t.Context())
			if err == nil {
				err = third.Close()
			}
			got <- err
		}()
		select {
		case err := <-got:
			t.Fatalf("a third slot of two was taken (err %v)", err)
		case <-time.After(100 * time.Millisecond): // proves nothing by itself; the close below must free it
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("after a slot was freed: %v", err)
		}
		_ = second.Close()
	})

	t.Run("the wait ends with its context", func(t *testing.T) {
		t.Parallel()
		b := &connBudget{dir: t.TempDir(), slots: 1}
		held, err := b.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := b.acquire(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("acquire with a cancelled context: %v, want context.Canceled", err)
		}
	})

	t.Run("slots are shared through the files, not the process", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		a, b := &connBudget{dir: dir, slots: 1}, &connBudget{dir: dir, slots: 1}
		held, err := a.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := b.acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a second budget on the same files took the held slot (err %v)", err)
		}
		_ = held.Close()
		again, err := b.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		_ = again.Close()
	})
}
