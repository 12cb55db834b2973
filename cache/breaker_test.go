package cache_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// breakerClient is a client with the breaker installed and, inside it, a counter of the commands
// that got past the breaker.
type breakerClient struct {
	rdb     *redis.Client
	breaker *cache.Breaker
	passed  *commandCounter
}

func newBreakerClient(t *testing.T, opts *redis.Options, cfg cache.BreakerConfig) *breakerClient {
	t.Helper()
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	b := cache.NewBreaker(cfg, testenv.Logger(t))
	passed := &commandCounter{}
	rdb.AddHook(b) // hooks run in the order added: the breaker is outermost
	rdb.AddHook(passed)
	return &breakerClient{rdb: rdb, breaker: b, passed: passed}
}

func TestBreaker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("opens_after_consecutive_failures_then_fails_without_reaching_redis", func(t *testing.T) {
		t.Parallel()
		c := newBreakerClient(t, &redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond},
			cache.BreakerConfig{FailuresToOpen: 3, OpenFor: time.Hour})
		for i := range 3 {
			if err := c.rdb.Get(ctx, "k").Err(); err == nil || errors.Is(err, cache.ErrRedisUnavailable) {
				t.Fatalf("call %d: %v, want the connection error (the breaker is still closed)", i+1, err)
			}
		}
		if !c.breaker.Open() {
			t.Fatalf("breaker %s after 3 failures, want open", c.breaker.State())
		}
		before := len(c.passed.commands())
		for range 100 {
			if err := c.rdb.Get(ctx, "k").Err(); !errors.Is(err, cache.ErrRedisUnavailable) {
				t.Fatalf("open breaker let a call through: %v", err)
			}
			if _, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "a"); p.Get(ctx, "b"); return nil }); !errors.Is(err, cache.ErrRedisUnavailable) {
				t.Fatalf("open breaker let a pipeline through: %v", err)
			}
		}
		if n := len(c.passed.commands()) - before; n != 0 {
			t.Fatalf("%d commands reached the client while the breaker was open", n)
		}
		if got := c.breaker.Rejected.Load(); got != 200 {
			t.Fatalf("rejected %d, want 200", got)
		}
	})

	t.Run("error_replies_misses_and_caller_cancellations_do_not_count", func(t *testing.T) {
		t.Parallel()
		r := testenv.NewRedis(t)
		opts, err := testenv.RedisOptions()
		if err != nil {
			t.Fatal(err)
		}
		if len(opts.Addrs) != 1 || opts.IsClusterMode {
			t.Skip("needs one Redis server")
		}
		c := newBreakerClient(t, &redis.Options{Addr: opts.Addrs[0], DB: opts.DB}, cache.BreakerConfig{FailuresToOpen: 1, OpenFor: time.Hour})
		key := r.Prefix + "text"
		if err := c.rdb.Set(ctx, key, "not a number", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.rdb.Get(ctx, r.Prefix+"missing").Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("GET of a missing key: %v", err)
		}
		if err := c.rdb.Incr(ctx, key).Err(); err == nil {
			t.Fatal("INCR of text succeeded")
		}
		if err := c.rdb.Eval(ctx, "return redis.call('NOSUCHCOMMAND')", []string{key}).Err(); err == nil {
			t.Fatal("a failing script succeeded")
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if err := c.rdb.Get(cancelled, key).Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("GET with a cancelled context: %v", err)
		}
		if c.breaker.Open() {
			t.Fatalf("breaker %s: an error reply or a cancellation counted as Redis failing", c.breaker.State())
		}
	})

	t.Run("half_open_probe_closes_it_when_redis_is_back_or_reopens_it", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartRedisServer(t)
		c := newBreakerClient(t, &redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond},
			cache.BreakerConfig{FailuresToOpen: 2, OpenFor: 50 * time.Millisecond})
		if err := c.rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		srv.Stop()
		for c.breaker.State() == "closed" {
			if err := c.rdb.Get(ctx, "k").Err(); err == nil {
				t.Fatal("GET succeeded with Redis stopped")
			}
		}
		// Still down when the probe goes: it fails and the breaker opens again.
		testenv.WaitUntil(t, "the breaker half-opens", func() bool { return c.breaker.State() == "half-open" })
		if err := c.rdb.Get(ctx, "k").Err(); err == nil || errors.Is(err, cache.ErrRedisUnavailable) {
			t.Fatalf("the probe: %v, want it sent and failing", err)
		}
		if c.breaker.State() != "open" {
			t.Fatalf("breaker %s after a failed probe, want open", c.breaker.State())
		}
		// Back: the next probe succeeds and closes it.
		srv.Start()
		testenv.WaitUntil(t, "the breaker half-opens", func() bool { return c.breaker.State() == "half-open" })
		if err := c.rdb.Ping(ctx).Err(); err != nil {
			t.Fatalf("the probe with Redis back: %v", err)
		}
		if c.breaker.State() != "closed" {
			t.Fatalf("breaker %s after a successful probe, want closed", c.breaker.State())
		}
	})

	t.Run("redis_slower_than_its_timeouts_costs_only_the_calls_that_open_it", func(t *testing.T) {
		t.Parallel()
		opts, err := testenv.RedisOptions()
		if err != nil {
			t.Fatal(err)
		}
		if len(opts.Addrs) != 1 || opts.IsClusterMode {
			t.Skip("the fault proxy stands in front of one Redis server")
		}
		proxy := testenv.NewFaults(t).RedisProxy()
		c := newBreakerClient(t, &redis.Options{Addr: proxy.Addr, ReadTimeout: 100 * time.Millisecond, MaxRetries: 1},
			cache.BreakerConfig{FailuresToOpen: 2, OpenFor: time.Hour})
		if err := c.rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		proxy.Toxic("slow", "latency", "downstream", map[string]any{"latency": 1000})
		for i := range 2 {
			var netErr interface{ Timeout() bool }
			if err := c.rdb.Ping(ctx).Err(); !errors.As(err, &netErr) || !netErr.Timeout() {
				t.Fatalf("call %d: %v, want a read timeout", i+1, err)
			}
		}
		sent := len(c.passed.commands())
		for range 50 {
			if err := c.rdb.Ping(ctx).Err(); !errors.Is(err, cache.ErrRedisUnavailable) {
				t.Fatalf("after two timeouts: %v, want ErrRedisUnavailable", err)
			}
		}
		if n := len(c.passed.commands()) - sent; n != 0 {
			t.Fatalf("%d commands went to the slow Redis after the breaker opened", n)
		}
	})
}
