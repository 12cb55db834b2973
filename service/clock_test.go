package service_test

import (
	"sync"
	"time"
)

// testClock is an injected clock (now, after) that moves only when a wait ends. Without a driver
// every wait ends at once, moving the clock to its end; with one (driven) each wait is handed to
// the test, which ends it when it chooses (end), so a test steps through waits in order.
type testClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan clockWait // nil: waits end at once
}

// clockWait is one call of after: until is when it ends on the test clock.
type clockWait struct {
	until time.Time
	fire  chan time.Time
}

func newTestClock(start time.Time) *testClock { return &testClock{now: start} }

// driven returns a clock whose waits are delivered to the test (take them from c.waits).
func driven(start time.Time) *testClock {
	return &testClock{now: start, waits: make(chan clockWait, 16)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	w := clockWait{until: c.now.Add(d), fire: make(chan time.Time, 1)}
	if c.waits == nil {
		c.now = w.until
		c.mu.Unlock()
		w.fire <- w.until
		return w.fire
	}
	c.mu.Unlock()
	c.waits <- w
	return w.fire
}

// end moves the clock to the end of w and lets it fire.
func (c *testClock) end(w clockWait) {
	c.mu.Lock()
	if w.until.After(c.now) {
		c.now = w.until
	}
	c.mu.Unlock()
	w.fire <- w.until
}
