package repository_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// The PostgreSQL fallback of the login-code store keeps the Redis store's rules; its clock is
// injected, so windows pass without waiting.

var fallbackPolicy = cache.CodePolicy{
	Validity: 10 * time.Minute, Resend: time.Minute, Attempts: 3,
	FailureBudget: 10, DailySends: 5, BudgetWindow: 24 * time.Hour, GlobalSends: 1000, GlobalWindow: time.Minute,
}

type fallbackEnv struct {
	store *repository.CodeFallback
	now   atomic.Int64 // unix nanoseconds
}

func newFallbackEnv(t *testing.T, p cache.CodePolicy) *fallbackEnv {
	t.Helper()
	db := testenv.NewDB(t)
	e := &fallbackEnv{}
	e.now.Store(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	e.store = repository.NewCodeFallback(db.Pool, dao.New(), p, func() time.Time { return time.Unix(0, e.now.Load()).UTC() })
	return e
}

func (e *fallbackEnv) advance(d time.Duration) { e.now.Add(int64(d)) }

func codeReason(err error) domain.CodeReason {
	var ce *domain.CodeError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}

func TestCodeFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("resend_interval_and_a_spent_code_keeps_it", func(t *testing.T) {
		t.Parallel()
		e := newFallbackEnv(t, fallbackPolicy)
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h-1", false); err != nil {
			t.Fatal(err)
		}
		err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h-2", false)
		var ce *domain.CodeError
		if !errors.As(err, &ce) || ce.Reason != domain.CodeTooSoon || ce.RetryAfter != time.Minute {
			t.Fatalf("second put: %v, want too-soon 60 s", err)
		}
		if err := e.store.Check(ctx, "email:a@example.com", "h-1"); err != nil {
			t.Fatalf("right code: %v", err)
		}
		if err := e.store.Check(ctx, "email:a@example.com", "h-1"); codeReason(err) != domain.CodeInvalid {
			t.Fatalf("used twice: %v", err)
		}
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h-2", false); codeReason(err) != domain.CodeTooSoon {
			t.Fatalf("send right after a login: %v, want too-soon", err)
		}
		e.advance(time.Minute)
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h-2", false); err != nil {
			t.Fatalf("send after the interval: %v", err)
		}
	})
	t.Run("wrong_guesses_burn_the_code_and_answer_alike", func(t *testing.T) {
		t.Parallel()
		e := newFallbackEnv(t, fallbackPolicy)
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h-right", false); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := e.store.Check(ctx, "email:a@example.com", "h-wrong"); codeReason(err) != domain.CodeInvalid {
				t.Fatalf("wrong guess %d: %v", i, err)
			}
		}
		if err := e.store.Check(ctx, "email:a@example.com", "h-right"); codeReason(err) != domain.CodeInvalid {
			t.Fatalf("right code after it burned: %v", err)
		}
		e.advance(11 * time.Minute)
		if err := e.store.Check(ctx, "email:a@example.com", "h-right"); codeReason(err) != domain.CodeInvalid {
			t.Fatalf("expired code: %v", err)
		}
	})
	t.Run("failure_budget_across_codes_then_the_window_passes", func(t *testing.T) {
		t.Parallel()
		p := fallbackPolicy
		p.FailureBudget, p.DailySends = 4, 100
		e := newFallbackEnv(t, p)
		const target = "phone:+4915100000001"
		for round := range 2 {
			if err := e.store.Put(ctx, target, "192.0.2.1", "h-right", false); err != nil {
				t.Fatalf("send %d: %v", round, err)
			}
			for range 2 {
				if err := e.store.Check(ctx, target, "h-wrong"); codeReason(err) != domain.CodeInvalid {
					t.Fatalf("wrong guess: %v", err)
				}
			}
			e.advance(time.Minute)
		}
		err := e.store.Check(ctx, target, "h-right")
		var ce *domain.CodeError
		if !errors.As(err, &ce) || ce.Reason != domain.CodeLocked || ce.RetryAfter < 23*time.Hour {
			t.Fatalf("after the budget: %v, want locked for about a day", err)
		}
		if err := e.store.Put(ctx, target, "192.0.2.1", "h-new", false); codeReason(err) != domain.CodeLocked {
			t.Fatalf("send after the budget: %v", err)
		}
		// A strong code is sent and checked despite the lock; wrong guesses do not burn it.
		if err := e.store.Put(ctx, target, "192.0.2.1", "h-strong", true); err != nil {
			t.Fatalf("strong send after the budget: %v", err)
		}
		for range p.Attempts + 1 {
			if err := e.store.Check(ctx, target, "h-wrong"); codeReason(err) != domain.CodeInvalid {
				t.Fatalf("wrong guess of a strong code: %v", err)
			}
		}
		if err := e.store.Check(ctx, target, "h-strong"); err != nil {
			t.Fatalf("the strong code: %v", err)
		}
		e.advance(24 * time.Hour)
		if err := e.store.Put(ctx, target, "192.0.2.1", "h-new", false); err != nil {
			t.Fatalf("send a day later: %v", err)
		}
		if err := e.store.Check(ctx, target, "h-new"); err != nil {
			t.Fatalf("login a day later: %v", err)
		}
	})
	t.Run("daily_and_global_send_caps", func(t *testing.T) {
		t.Parallel()
		p := fallbackPolicy
		p.DailySends, p.GlobalSends = 2, 4
		e := newFallbackEnv(t, p)
		for i := range 2 {
			if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h", false); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
			e.advance(time.Minute)
		}
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h", false); codeReason(err) != domain.CodeSendCap {
			t.Fatalf("third send to one target: %v, want send-cap", err)
		}
		// The global window started at the first send, 2 minutes ago: a new one has begun; three
		// hits count in it so far (the capped send's included).
		if err := e.store.Put(ctx, "email:b@example.com", "192.0.2.1", "h", false); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Put(ctx, "email:c@example.com", "192.0.2.1", "h", false); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Put(ctx, "email:d@example.com", "192.0.2.1", "h", false); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Put(ctx, "email:e@example.com", "192.0.2.1", "h", false); codeReason(err) != domain.CodeBusy {
			t.Fatalf("fifth send in the global window: %v, want busy", err)
		}
	})
	t.Run("send_cap_is_per_client", func(t *testing.T) {
		t.Parallel()
		p := fallbackPolicy
		p.DailySends = 1
		e := newFallbackEnv(t, p)
		if err := e.store.Put(ctx, "email:a@example.com", "198.51.100.7", "h", false); err != nil {
			t.Fatal(err)
		}
		e.advance(time.Minute)
		if err := e.store.Put(ctx, "email:a@example.com", "198.51.100.7", "h", false); codeReason(err) != domain.CodeSendCap {
			t.Fatalf("second send by one client: %v, want send-cap", err)
		}
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h", false); err != nil {
			t.Fatalf("another client's send: %v", err)
		}
	})
	t.Run("withdraw_gives_the_send_back", func(t *testing.T) {
		t.Parallel()
		p := fallbackPolicy
		p.DailySends = 1
		e := newFallbackEnv(t, p)
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h-1", false); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Withdraw(ctx, "email:a@example.com", "192.0.2.1", "h-1"); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Put(ctx, "email:a@example.com", "192.0.2.1", "h-2", false); err != nil {
			t.Fatalf("put after withdraw: %v", err)
		}
	})
}

// TestCodeFallback_ConcurrentGuessesNeverExceedTheBudget: 50 wrong guesses at once are counted
// one at a time: exactly the budget of them are compared, the rest answer locked.
func TestCodeFallback_ConcurrentGuessesNeverExceedTheBudget(t *testing.T) {
	t.Parallel()
	p := fallbackPolicy
	p.Attempts = 1000
	e := newFallbackEnv(t, p)
	ctx := context.Background()
	if err := e.store.Put(ctx, "email:victim@example.com", "192.0.2.1", "h-right", false); err != nil {
		t.Fatal(err)
	}
	const n = 50
	reasons := make([]domain.CodeReason, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			err := e.store.Check(ctx, "email:victim@example.com", "h-wrong")
			reasons[i] = codeReason(err)
			if reasons[i] == "" {
				errs[i] = err
			}
		})
	}
	close(start)
	wg.Wait()
	counts := map[domain.CodeReason]int{}
	for i, r := range reasons {
		if errs[i] != nil {
			t.Fatalf("guess %d: %v", i, errs[i])
		}
		counts[r]++
	}
	if counts[domain.CodeInvalid] != p.FailureBudget || counts[domain.CodeLocked] != n-p.FailureBudget {
		t.Fatalf("outcomes %v, want %d compared and %d locked", counts, p.FailureBudget, n-p.FailureBudget)
	}
	if err := e.store.Check(ctx, "email:victim@example.com", "h-right"); codeReason(err) != domain.CodeLocked {
		t.Fatalf("right code after the budget: %v", err)
	}
}
