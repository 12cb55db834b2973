package cache

import (
	"log/slog"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"
)

// DefaultBreakerSummaryEvery is how often an open breaker says it is still open.
const DefaultBreakerSummaryEvery = 30 * time.Second

// breakerLog reports the breaker's state changes without flooding the log during an outage:
// while Redis is down the breaker goes open → half-open → open once per OpenFor (twice a second
// by default, two lines each). It logs the opening once, counts the probes that fail, says so in
// a summary every `every`, and logs the closing with how long Redis was out.
type breakerLog struct {
	log     *slog.Logger
	now     func() time.Time
	every   time.Duration
	openFor time.Duration

	mu           sync.Mutex
	openedAt     time.Time // zero while closed
	lastSummary  time.Time
	probesFailed int // since openedAt
}

func (l *breakerLog) change(from, to gobreaker.State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	switch {
	case to == gobreaker.StateOpen && l.openedAt.IsZero():
		l.openedAt, l.lastSummary, l.probesFailed = now, now, 0
		l.log.Warn("redis circuit breaker opened: Redis calls fail fast and requests use PostgreSQL",
			"from", from.String(), "probe_every", l.openFor)
	case to == gobreaker.StateOpen: // a probe failed
		l.probesFailed++
		if now.Sub(l.lastSummary) >= l.every {
			l.lastSummary = now
			l.log.Warn("redis circuit breaker still open: Redis keeps failing",
				"open_for", now.Sub(l.openedAt).Round(time.Millisecond), "probes_failed", l.probesFailed)
		}
	case to == gobreaker.StateClosed:
		if !l.openedAt.IsZero() {
			l.log.Info("redis circuit breaker closed: Redis answers again",
				"open_for", now.Sub(l.openedAt).Round(time.Millisecond), "probes_failed", l.probesFailed)
		}
		l.openedAt = time.Time{}
	default: // open → half-open: one probe goes out
		l.log.Debug("redis circuit breaker half-open: probing Redis")
	}
}
