package ioc

import "time"

// NewClock is the wall clock; tests inject their own where time matters.
func NewClock() func() time.Time { return time.Now }

// NewAfter is the wall clock's wait (time.After), for code that waits on the injected clock.
func NewAfter() func(time.Duration) <-chan time.Time { return time.After }
