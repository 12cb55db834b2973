package ioc

import "time"

// NewClock is the wall clock; tests inject their own where time matters.
func NewClock() func() time.Time { return time.Now }
