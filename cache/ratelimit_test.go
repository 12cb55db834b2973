package cache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestRateLimiterBudget: N per window is N at once, then the budget refills one request every
// window/N; what a decision tells (remaining, until the budget is whole, until the next request
// fits) follows, and keys do not share budgets. The window is an hour so that the few
// milliseconds the test takes refill nothing.
func TestRateLimiterBudget(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	l := cache.NewRateLimiter(r.Client, cache.Keyspace(r.Prefix))
	ctx := context.Background()
	const limit, window = 5, time.Hour
	const interval = window / limit
	near := func(got, want time.Duration) bool { return got <= want && got > want-time.Second }

	for i := range limit {
		d, err := l.Allow(ctx, "a", limit, window)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed || d.Limit != limit || d.Remaining != limit-1-i || !near(d.Reset, time.Duration(i+1)*interval) || d.RetryAfter != 0 {
			t.Fatalf("request %d: %+v, want allowed with %d remaining, the budget whole after %v", i+1, d, limit-1-i, time.Duration(i+1)*interval)
		}
	}
	for range 3 { // refusals are not counted: the wait does not grow
		d, err := l.Allow(ctx, "a", limit, window)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed || d.Remaining != 0 || !near(d.RetryAfter, interval) || !near(d.Reset, window) {
			t.Fatalf("over the budget: %+v, want refused, the next request in %v, the budget whole in %v", d, interval, window)
		}
	}
	if d, err := l.Allow(ctx, "b", limit, window); err != nil || !d.Allowed || d.Remaining != limit-1 {
		t.Fatalf("another key: %+v, %v; want a budget of its own", d, err)
	}
}

// TestRateLimiterOneBudgetForConcurrentClients: requests racing through two clients (two
// instances) on one key are admitted exactly up to the budget.
func TestRateLimiterOneBudgetForConcurrentClients(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	limiters := []*cache.RateLimiter{
		cache.NewRateLimiter(r.Client, cache.Keyspace(r.Prefix)),
		cache.NewRateLimiter(testenv.NewRedis(t).Client, cache.Keyspace(r.Prefix)),
	}
	const limit, requests = 20, 100
	decisions := make([]domain.RateDecision, requests)
	errs := make([]error, requests)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			<-start
			decisions[i], errs[i] = limiters[i%2].Allow(context.Background(), "shared", limit, time.Hour)
		})
	}
	close(start)
	wg.Wait()
	seen := map[int]bool{}
	for i, d := range decisions {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if d.Allowed {
			if seen[d.Remaining] {
				t.Fatalf("two admitted requests saw %d remaining", d.Remaining)
			}
			seen[d.Remaining] = true
		}
	}
	if len(seen) != limit {
		t.Fatalf("%d of %d requests admitted, want %d", len(seen), requests, limit)
	}
}
