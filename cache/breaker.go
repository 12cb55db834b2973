package cache

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"
)

// ErrRedisUnavailable is what every Redis command returns, without reaching Redis, while the
// breaker in front of it is open: Redis failed several times in a row and is given time to
// recover. Callers treat it like any other Redis failure (read from PostgreSQL, fail open).
var ErrRedisUnavailable = errors.New("redis unavailable: circuit breaker open after repeated failures")

// BreakerConfig tunes the Redis circuit breaker.
type BreakerConfig struct {
	FailuresToOpen uint32        // consecutive transport failures that open it
	OpenFor        time.Duration // how long it stays open before one probe command may pass
	// SummaryEvery: while open, at most one "still open" line this often (0: 30s).
	SummaryEvery time.Duration
	Now          func() time.Time // the clock of the log's summaries (nil: time.Now)
}

// Breaker is a circuit breaker in front of Redis, installed as a go-redis hook. A Redis that
// answers slower than the client's timeouts otherwise costs every request one timeout per Redis
// call before the PostgreSQL fallback runs; once the breaker opens, Redis calls fail at once and
// requests cost what PostgreSQL costs. Only transport failures count (timeouts, refused or reset
// connections): an error reply is Redis answering, and a caller's own cancellation says nothing
// about Redis.
//
// One breaker guards a whole client, so with a Redis Cluster one failing node sends every Redis
// call to the fallbacks for a while; that is the price of keeping it simple.
type Breaker struct {
	cb       *gobreaker.CircuitBreaker[struct{}]
	Rejected atomic.Int64 // commands refused while open or half-open
}

// NewBreaker returns a closed breaker. Its opening and closing are logged, and while it stays
// open a summary every cfg.SummaryEvery (see breakerLog).
func NewBreaker(cfg BreakerConfig, log *slog.Logger) *Breaker {
	if cfg.FailuresToOpen < 1 {
		cfg.FailuresToOpen = 1
	}
	if cfg.SummaryEvery <= 0 {
		cfg.SummaryEvery = DefaultBreakerSummaryEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	bl := &breakerLog{log: log, now: cfg.Now, every: cfg.SummaryEvery, openFor: cfg.OpenFor}
	return &Breaker{cb: gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "redis",
		MaxRequests: 1, // one probe at a time when half-open
		Timeout:     cfg.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= cfg.FailuresToOpen },
		IsSuccessful: func(err error) bool {
			var reply redis.Error // an error reply (redis.Nil included) came from a working server
			return err == nil || errors.As(err, &reply)
		},
		IsExcluded: func(err error) bool {
			return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
		},
		OnStateChange: func(_ string, from, to gobreaker.State) { bl.change(from, to) },
	})}
}

// Open reports whether the breaker is refusing commands now (open, or half-open with its probe
// out).
func (b *Breaker) Open() bool { return b.cb.State() != gobreaker.StateClosed }

// State is the breaker's state: "closed", "half-open" or "open".
func (b *Breaker) State() string { return b.cb.State().String() }

// DialHook passes dials through: a failed dial surfaces as the command's error.
func (b *Breaker) DialHook(next redis.DialHook) redis.DialHook { return next }

// insideBreaker marks the context of a call the breaker let through. The commands go-redis sends
// to set up a new connection for that call (HELLO, CLIENT SETINFO) run through the hooks with the
// same context; they are part of the call, not calls of their own — as those, a half-open
// breaker would refuse the probe's own connection setup and never close again.
type insideBreaker struct{}

// ProcessHook runs each command through the breaker.
func (b *Breaker) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(insideBreaker{}) != nil {
			return next(ctx, cmd)
		}
		ctx = context.WithValue(ctx, insideBreaker{}, true)
		_, err := b.cb.Execute(func() (struct{}, error) { return struct{}{}, next(ctx, cmd) })
		if b.refused(err) {
			cmd.SetErr(ErrRedisUnavailable)
			return ErrRedisUnavailable
		}
		return err
	}
}

// ProcessPipelineHook runs each pipeline (and MULTI/EXEC transaction) through the breaker as one
// call.
func (b *Breaker) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(insideBreaker{}) != nil {
			return next(ctx, cmds)
		}
		ctx = context.WithValue(ctx, insideBreaker{}, true)
		_, err := b.cb.Execute(func() (struct{}, error) { return struct{}{}, next(ctx, cmds) })
		if b.refused(err) {
			for _, c := range cmds {
				c.SetErr(ErrRedisUnavailable)
			}
			return ErrRedisUnavailable
		}
		return err
	}
}

func (b *Breaker) refused(err error) bool {
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		b.Rejected.Add(1)
		return true
	}
	return false
}
