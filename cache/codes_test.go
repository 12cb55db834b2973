package cache_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// The one-time code scripts run on the real Redis. The store only sees code hashes; the tests
// pass stand-ins ("h-1", ...) as the service would pass HMACs.

var codePolicy = cache.CodePolicy{
	Validity: 10 * time.Minute, Resend: time.Minute, Attempts: 3,
	FailureBudget: 10, DailySends: 5, BudgetWindow: 24 * time.Hour, GlobalSends: 1000, GlobalWindow: time.Minute,
}

type codesEnv struct {
	rdb   redis.UniversalClient
	ks    cache.Keyspace
	store *cache.CodeStore
}

func newCodesEnv(t *testing.T, p cache.CodePolicy) *codesEnv {
	t.Helper()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	return &codesEnv{rdb: r.Client, ks: ks, store: cache.NewCodeStore(r.Client, ks, p)}
}

func (e *codesEnv) codeKey(target string) string { return e.ks.Key("logincode", "{"+target+"}") }

// expire lets target's code run out of its resend interval, as if a minute had passed.
func (e *codesEnv) pastResend(t *testing.T, target string) {
	t.Helper()
	if err := e.rdb.Expire(context.Background(), e.codeKey(target), 9*time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
}

// owner and attacker are two requesting clients (their IP addresses).
const (
	owner    = "192.0.2.1"
	attacker = "198.51.100.7"
)

func reasonOf(err error) domain.CodeReason {
	var ce *domain.CodeError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}

func TestCodeStore_Send(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("resend_within_the_interval_is_refused_with_its_wait", func(t *testing.T) {
		t.Parallel()
		e := newCodesEnv(t, codePolicy)
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-1", false); err != nil {
			t.Fatal(err)
		}
		err := e.store.Put(ctx, "email:a@example.com", owner, "h-2", false)
		var ce *domain.CodeError
		if !errors.As(err, &ce) || ce.Reason != domain.CodeTooSoon || ce.RetryAfter != time.Minute {
			t.Fatalf("second put: %v, want too-soon with 60 s", err)
		}
	})
	t.Run("nothing_plain_is_stored_the_hash_only", func(t *testing.T) {
		t.Parallel()
		e := newCodesEnv(t, codePolicy)
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-1", false); err != nil {
			t.Fatal(err)
		}
		got, err := e.rdb.HGetAll(ctx, e.codeKey("email:a@example.com")).Result()
		if err != nil || got["h"] != "h-1" || got["strong"] != "0" || len(got) != 4 {
			t.Fatalf("code key holds %v (%v), want the hash, attempts left, the spent and the strong flag", got, err)
		}
	})
	t.Run("daily_send_cap_per_client_and_target", func(t *testing.T) {
		t.Parallel()
		e := newCodesEnv(t, codePolicy)
		const target = "phone:+4915100000001"
		for i := range codePolicy.DailySends {
			if err := e.store.Put(ctx, target, attacker, "h", false); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
			e.pastResend(t, target)
		}
		err := e.store.Put(ctx, target, attacker, "h", false)
		var ce *domain.CodeError
		if !errors.As(err, &ce) || ce.Reason != domain.CodeSendCap || ce.RetryAfter < 23*time.Hour {
			t.Fatalf("send over the cap: %v, want send-cap for about a day", err)
		}
		// Whoever used up their sends did not use up the owner's.
		if err := e.store.Put(ctx, target, owner, "h", false); err != nil {
			t.Fatalf("the owner's send after another client's cap: %v", err)
		}
		if err := e.store.Put(ctx, "phone:+4915100000002", attacker, "h", false); err != nil {
			t.Fatalf("another target is not capped: %v", err)
		}
	})
	t.Run("global_send_rate_cap", func(t *testing.T) {
		t.Parallel()
		p := codePolicy
		p.GlobalSends = 3
		e := newCodesEnv(t, p)
		for i := range 3 {
			if err := e.store.Put(ctx, "email:u"+string(rune('a'+i))+"@example.com", owner, "h", false); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		if err := e.store.Put(ctx, "email:z@example.com", owner, "h", false); reasonOf(err) != domain.CodeBusy {
			t.Fatalf("fourth send in the window: %v, want busy", err)
		}
	})
	t.Run("withdraw_lifts_the_interval_and_gives_the_send_back", func(t *testing.T) {
		t.Parallel()
		p := codePolicy
		p.DailySends = 1
		e := newCodesEnv(t, p)
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-1", false); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Withdraw(ctx, "email:a@example.com", owner, "h-other"); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-2", false); reasonOf(err) != domain.CodeTooSoon {
			t.Fatalf("withdrawing another code lifted the interval: %v", err)
		}
		if err := e.store.Withdraw(ctx, "email:a@example.com", owner, "h-1"); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-2", false); err != nil {
			t.Fatalf("put after withdraw: %v", err)
		}
	})
}

func TestCodeStore_Verify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("every_refusal_is_one_reason", func(t *testing.T) {
		t.Parallel()
		e := newCodesEnv(t, codePolicy)
		if err := e.store.Check(ctx, "email:never@example.com", "h"); reasonOf(err) != domain.CodeInvalid {
			t.Fatalf("never sent: %v", err)
		}
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-right", false); err != nil {
			t.Fatal(err)
		}
		for i := range codePolicy.Attempts + 1 { // wrong, wrong, wrong (burns), then burned
			err := e.store.Check(ctx, "email:a@example.com", "h-wrong")
			if reasonOf(err) != domain.CodeInvalid || strings.Contains(err.Error(), "left") {
				t.Fatalf("wrong guess %d: %v", i, err)
			}
		}
		if err := e.store.Check(ctx, "email:a@example.com", "h-right"); reasonOf(err) != domain.CodeInvalid {
			t.Fatalf("right code after the code burned: %v", err)
		}
	})
	t.Run("a_used_code_is_spent_and_keeps_its_resend_window", func(t *testing.T) {
		t.Parallel()
		e := newCodesEnv(t, codePolicy)
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-right", false); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Check(ctx, "email:a@example.com", "h-right"); err != nil {
			t.Fatalf("right code: %v", err)
		}
		if err := e.store.Check(ctx, "email:a@example.com", "h-right"); reasonOf(err) != domain.CodeInvalid {
			t.Fatalf("the code worked twice: %v", err)
		}
		if err := e.store.Put(ctx, "email:a@example.com", owner, "h-next", false); reasonOf(err) != domain.CodeTooSoon {
			t.Fatalf("a new code right after a login: %v, want too-soon", err)
		}
		if ttl := e.rdb.TTL(ctx, e.codeKey("email:a@example.com")).Val(); ttl <= 9*time.Minute {
			t.Fatalf("the spent code's key lives %v more, want its validity", ttl)
		}
	})
	t.Run("failure_budget_across_codes_locks_the_target", func(t *testing.T) {
		t.Parallel()
		p := codePolicy
		p.DailySends = 100
		e := newCodesEnv(t, p)
		const target = "email:victim@example.com"
		wrong := 0
		for wrong < p.FailureBudget {
			if err := e.store.Put(ctx, target, owner, "h-right", false); err != nil {
				t.Fatalf("send after %d wrong guesses: %v", wrong, err)
			}
			for range p.Attempts {
				if wrong == p.FailureBudget {
					break
				}
				if err := e.store.Check(ctx, target, "h-wrong"); reasonOf(err) != domain.CodeInvalid {
					t.Fatalf("wrong guess %d: %v", wrong, err)
				}
				wrong++
			}
			e.pastResend(t, target)
		}
		// The budget is used up: the right six-digit code is refused too, and so is a new one.
		err := e.store.Check(ctx, target, "h-right")
		var ce *domain.CodeError
		if !errors.As(err, &ce) || ce.Reason != domain.CodeLocked || ce.RetryAfter < 23*time.Hour {
			t.Fatalf("check after the budget: %v, want locked for about a day", err)
		}
		if err := e.store.Put(ctx, target, owner, "h-new", false); reasonOf(err) != domain.CodeLocked {
			t.Fatalf("send after the budget: %v, want locked", err)
		}
		if err := e.store.Put(ctx, "email:other@example.com", owner, "h", false); err != nil {
			t.Fatalf("another target is not locked: %v", err)
		}
		// A strong code is sent and works: wrong guesses neither burn it nor lift the lock.
		if err := e.store.Put(ctx, target, owner, "h-strong", true); err != nil {
			t.Fatalf("strong send after the budget: %v", err)
		}
		for i := range p.Attempts + 2 {
			if err := e.store.Check(ctx, target, "h-wrong"); reasonOf(err) != domain.CodeInvalid {
				t.Fatalf("wrong guess %d of a strong code: %v, want invalid", i, err)
			}
		}
		if err := e.store.Check(ctx, target, "h-strong"); err != nil {
			t.Fatalf("the strong code after wrong guesses: %v", err)
		}
		if err := e.store.Check(ctx, target, "h-strong"); reasonOf(err) != domain.CodeInvalid {
			t.Fatalf("a strong code worked twice: %v", err)
		}
		if fails, err := e.rdb.HGet(ctx, e.codeKey(target)+":budget", "fails").Int(); err != nil || fails != p.FailureBudget {
			t.Fatalf("budget counted %d (%v), want it to stay at %d", fails, err, p.FailureBudget)
		}
	})
}

// TestCodeStore_ConcurrentGuessesNeverExceedTheBudget: 50 wrong guesses at once, from as many
// clients, against a code with attempts to spare: exactly the budget of them is compared, the rest
// are refused as locked, and the right code no longer works.
func TestCodeStore_ConcurrentGuessesNeverExceedTheBudget(t *testing.T) {
	t.Parallel()
	p := codePolicy
	p.Attempts = 1000
	e := newCodesEnv(t, p)
	ctx := context.Background()
	const target = "phone:+4915100000009"
	if err := e.store.Put(ctx, target, owner, "h-right", false); err != nil {
		t.Fatal(err)
	}
	const n = 50
	reasons := make([]domain.CodeReason, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			reasons[i] = reasonOf(e.store.Check(ctx, target, "h-wrong"))
		})
	}
	close(start)
	wg.Wait()
	counts := map[domain.CodeReason]int{}
	for _, r := range reasons {
		counts[r]++
	}
	if counts[domain.CodeInvalid] != p.FailureBudget || counts[domain.CodeLocked] != n-p.FailureBudget {
		t.Fatalf("outcomes %v, want %d compared and %d locked", counts, p.FailureBudget, n-p.FailureBudget)
	}
	fails, err := e.rdb.HGet(ctx, e.codeKey(target)+":budget", "fails").Int()
	if err != nil || fails != p.FailureBudget {
		t.Fatalf("budget counted %d (%v), want %d", fails, err, p.FailureBudget)
	}
	if err := e.store.Check(ctx, target, "h-right"); reasonOf(err) != domain.CodeLocked {
		t.Fatalf("right code after the budget: %v", err)
	}
}
