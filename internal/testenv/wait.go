package testenv

import (
	"testing"
	"time"
)

// DefaultWait bounds WaitUntil and Recv when the caller names no bound. It only has to be long
// enough that a loaded 2-core machine never trips it on a condition that is about to hold: a test
// that reaches it has failed (or would have hung).
const DefaultWait = 20 * time.Second

// Polling starts fast, so conditions other goroutines are about to make true cost microseconds, and
// backs off, so a condition that queries PostgreSQL or Redis does not hammer the server.
const (
	firstPoll = 100 * time.Microsecond
	maxPoll   = 10 * time.Millisecond
)

// WaitUntil polls cond until it holds; it is for conditions certain to become true soon (a counter
// other goroutines are about to bump, a row a worker is about to write, a key about to expire), and
// fails tb with what rather than hang once the bound (DefaultWait unless within is given) passes.
// The pauses between polls pace the polling; they synchronize nothing.
func WaitUntil(tb testing.TB, what string, cond func() bool, within ...time.Duration) {
	tb.Helper()
	bound := boundOf(within)
	deadline := time.Now().Add(bound)
	pause := firstPoll
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up after %v waiting until %s", bound, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, maxPoll)
	}
}

// Recv waits for one value from ch, failing tb with what rather than hang once the bound
// (DefaultWait unless within is given) passes.
func Recv[T any](tb testing.TB, ch <-chan T, what string, within ...time.Duration) T {
	tb.Helper()
	bound := boundOf(within)
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		tb.Fatalf("gave up after %v waiting for %s", bound, what)
		panic("unreachable")
	}
}

func boundOf(within []time.Duration) time.Duration {
	switch len(within) {
	case 0:
		return DefaultWait
	case 1:
		return within[0]
	default:
		panic("testenv: at most one bound")
	}
}
