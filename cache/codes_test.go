package cache_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// The one-time code scripts run on the real Redis; every branch of code_send.lua and
// code_verify.lua is driven here, some by shaping the keys directly.

var codePolicy = cache.CodePolicy{Validity: 10 * time.Minute, Resend: time.Minute, Attempts: 3}

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

// codeKey and attemptsKey are where the store keeps target's code and its attempts left.
func (e *codesEnv) codeKey(target string) string { return e.ks.Key("code", "{"+target+"}") }

func (e *codesEnv) attemptsKey(target string) string { return e.codeKey(target) + ":attempts" }

func (e *codesEnv) get(t *testing.T, key string) (string, bool) {
	t.Helper()
	v, err := e.rdb.Get(context.Background(), key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return v, true
}

// put stores code for target and fails the test if the store refuses.
func (e *codesEnv) put(t *testing.T, target, code string) {
	t.Helper()
	if err := e.store.Put(context.Background(), target, code); err != nil {
		t.Fatalf("put %s: %v", target, err)
	}
}

// requireCodeError fails unless err is a *domain.CodeError with the reason (and, when wantLeft is
// not negative, that many attempts left).
func requireCodeError(t *testing.T, err error, reason domain.CodeReason, wantLeft int) *domain.CodeError {
	t.Helper()
	var ce *domain.CodeError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want *domain.CodeError %s", err, err, reason)
	}
	if ce.Reason != reason || (wantLeft >= 0 && ce.AttemptsLeft != wantLeft) {
		t.Fatalf("code error %+v, want reason %s with %d attempts left", ce, reason, wantLeft)
	}
	return ce
}

// requireSystemError fails unless err is an error that is not a refused code step.
func requireSystemError(t *testing.T, err error, contains string) {
	t.Helper()
	var ce *domain.CodeError
	if err == nil || errors.As(err, &ce) {
		t.Fatalf("error = %v, want a system error (not a *domain.CodeError)", err)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not mention %q", err, contains)
	}
}

func TestCodeStore_Send(t *testing.T) {
	t.Parallel()
	e := newCodesEnv(t, codePolicy)
	ctx := context.Background()

	t.Run("stores_the_code_and_attempts_with_the_validity", func(t *testing.T) {
		t.Parallel()
		target := "email:send@example.com"
		e.put(t, target, "123456")
		for key, want := range map[string]string{e.codeKey(target): "123456", e.attemptsKey(target): "3"} {
			got, ok := e.get(t, key)
			if !ok || got != want {
				t.Fatalf("%s = %q (present %v), want %q", key, got, ok, want)
			}
			ttl, err := e.rdb.TTL(ctx, key).Result()
			if err != nil || ttl <= codePolicy.Validity-codePolicy.Resend || ttl > codePolicy.Validity {
				t.Fatalf("TTL %s = %v (err %v), want just under %v", key, ttl, err, codePolicy.Validity)
			}
		}
	})
	t.Run("keys_share_one_hash_tag", func(t *testing.T) {
		t.Parallel()
		target := "phone:+4915112345678"
		e.put(t, target, "654321")
		keys, err := testenv.ScanKeys(ctx, e.rdb, string(e.ks)+"code:*4915112345678*") // every master of a cluster
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 {
			t.Fatalf("keys %v, want the code and its attempts", keys)
		}
		// Redis Cluster hashes only the first {...} of a key; both must carry the same one.
		tag := regexp.MustCompile(`\{[^}]*\}`)
		for _, k := range keys {
			if got := tag.FindString(k); got != "{"+target+"}" {
				t.Fatalf("key %q hashes on %q, want {%s}", k, got, target)
			}
		}
	})
	t.Run("resend_too_soon_is_refused_and_keeps_the_code", func(t *testing.T) {
		t.Parallel()
		target := "email:soon@example.com"
		e.put(t, target, "111111")
		ce := requireCodeError(t, e.store.Put(ctx, target, "222222"), domain.CodeTooSoon, -1)
		if ce.RetryAfter != 60*time.Second {
			t.Fatalf("RetryAfter = %v, want 60s", ce.RetryAfter)
		}
		if got, _ := e.get(t, e.codeKey(target)); got != "111111" {
			t.Fatalf("code after the refused resend = %q, want the first one", got)
		}
	})
	t.Run("resend_after_the_interval_replaces_code_and_attempts", func(t *testing.T) {
		t.Parallel()
		target := "email:later@example.com"
		e.put(t, target, "111111")
		requireCodeError(t, e.store.Check(ctx, target, "999999"), domain.CodeWrong, 2)
		// A minute has passed: the code has at most Validity-Resend left to live.
		left := codePolicy.Validity - codePolicy.Resend
		for _, k := range []string{e.codeKey(target), e.attemptsKey(target)} {
			if err := e.rdb.Expire(ctx, k, left).Err(); err != nil {
				t.Fatal(err)
			}
		}
		e.put(t, target, "222222")
		if got, _ := e.get(t, e.codeKey(target)); got != "222222" {
			t.Fatalf("code = %q, want the new one", got)
		}
		if got, _ := e.get(t, e.attemptsKey(target)); got != "3" {
			t.Fatalf("attempts = %q, want a fresh 3", got)
		}
	})
	t.Run("withdrawn_code_is_gone_and_a_resend_is_allowed_at_once", func(t *testing.T) {
		t.Parallel()
		target := "email:undelivered@example.com"
		e.put(t, target, "111111")
		if err := e.store.Withdraw(ctx, target, "111111"); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{e.codeKey(target), e.attemptsKey(target)} {
			if _, ok := e.get(t, k); ok {
				t.Fatalf("%s still exists after the withdrawal", k)
			}
		}
		e.put(t, target, "222222") // no resend interval to wait out
	})
	t.Run("withdrawing_an_older_code_leaves_the_current_one", func(t *testing.T) {
		t.Parallel()
		target := "email:newer@example.com"
		e.put(t, target, "222222")
		if err := e.store.Withdraw(ctx, target, "111111"); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.get(t, e.codeKey(target)); got != "222222" {
			t.Fatalf("code = %q, want the current one kept", got)
		}
		if got, _ := e.get(t, e.attemptsKey(target)); got != "3" {
			t.Fatalf("attempts = %q, want 3 kept", got)
		}
	})
	t.Run("code_key_without_expiry_is_a_system_error", func(t *testing.T) {
		t.Parallel()
		target := "email:forever@example.com"
		if err := e.rdb.Set(ctx, e.codeKey(target), "123456", 0).Err(); err != nil {
			t.Fatal(err)
		}
		requireSystemError(t, e.store.Put(ctx, target, "654321"), "no expiry")
		if got, _ := e.get(t, e.codeKey(target)); got != "123456" {
			t.Fatalf("the script overwrote the key: %q", got)
		}
	})
}

func TestCodeStore_Verify(t *testing.T) {
	t.Parallel()
	e := newCodesEnv(t, codePolicy)
	ctx := context.Background()

	t.Run("right_code_passes_once_then_is_missing", func(t *testing.T) {
		t.Parallel()
		target := "email:right@example.com"
		e.put(t, target, "424242")
		if err := e.store.Check(ctx, target, "424242"); err != nil {
			t.Fatalf("right code: %v", err)
		}
		for _, k := range []string{e.codeKey(target), e.attemptsKey(target)} {
			if _, ok := e.get(t, k); ok {
				t.Fatalf("%s survived a successful verify", k)
			}
		}
		requireCodeError(t, e.store.Check(ctx, target, "424242"), domain.CodeMissing, -1)
	})
	t.Run("right_code_after_a_wrong_one", func(t *testing.T) {
		t.Parallel()
		target := "email:second-try@example.com"
		e.put(t, target, "424242")
		requireCodeError(t, e.store.Check(ctx, target, "000000"), domain.CodeWrong, 2)
		if err := e.store.Check(ctx, target, "424242"); err != nil {
			t.Fatalf("right code after one wrong guess: %v", err)
		}
	})
	t.Run("three_wrong_guesses_burn_it_even_for_the_right_code", func(t *testing.T) {
		t.Parallel()
		target := "email:guesser@example.com"
		e.put(t, target, "424242")
		requireCodeError(t, e.store.Check(ctx, target, "000001"), domain.CodeWrong, 2)
		requireCodeError(t, e.store.Check(ctx, target, "000002"), domain.CodeWrong, 1)
		requireCodeError(t, e.store.Check(ctx, target, "000003"), domain.CodeBurned, -1)
		requireCodeError(t, e.store.Check(ctx, target, "424242"), domain.CodeBurned, -1)
		// Burned, not gone: it stays until it expires, and a resend is still too soon.
		if _, ok := e.get(t, e.codeKey(target)); !ok {
			t.Fatal("burned code vanished")
		}
		requireCodeError(t, e.store.Put(ctx, target, "111111"), domain.CodeTooSoon, -1)
	})
	t.Run("missing_attempts_key_counts_as_burned", func(t *testing.T) {
		t.Parallel()
		target := "email:no-attempts@example.com"
		e.put(t, target, "424242")
		if err := e.rdb.Del(ctx, e.attemptsKey(target)).Err(); err != nil {
			t.Fatal(err)
		}
		requireCodeError(t, e.store.Check(ctx, target, "424242"), domain.CodeBurned, -1)
	})
	t.Run("never_sent_is_missing", func(t *testing.T) {
		t.Parallel()
		requireCodeError(t, e.store.Check(ctx, "email:nobody@example.com", "123456"), domain.CodeMissing, -1)
	})
	t.Run("expired_is_missing_and_can_be_sent_again", func(t *testing.T) {
		t.Parallel()
		target := "email:expired@example.com"
		e.put(t, target, "424242")
		for _, k := range []string{e.codeKey(target), e.attemptsKey(target)} {
			if err := e.rdb.PExpire(ctx, k, time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := e.rdb.Exists(ctx, e.codeKey(target), e.attemptsKey(target)).Result()
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("keys with a 1 ms TTL still there after 10 s")
			}
			time.Sleep(time.Millisecond) // waiting for Redis to expire the keys
		}
		requireCodeError(t, e.store.Check(ctx, target, "424242"), domain.CodeMissing, -1)
		e.put(t, target, "515151")
		if err := e.store.Check(ctx, target, "515151"); err != nil {
			t.Fatalf("the new code after expiry: %v", err)
		}
	})
	t.Run("code_key_without_expiry_is_a_system_error", func(t *testing.T) {
		t.Parallel()
		target := "email:immortal@example.com"
		if err := e.rdb.Set(ctx, e.codeKey(target), "424242", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := e.rdb.Set(ctx, e.attemptsKey(target), "3", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		requireSystemError(t, e.store.Check(ctx, target, "424242"), "no expiry")
		if got, _ := e.get(t, e.codeKey(target)); got != "424242" {
			t.Fatal("the script spent a code that must never have existed")
		}
	})
	t.Run("concurrent_right_guesses_succeed_once", func(t *testing.T) {
		t.Parallel()
		target := "email:race@example.com"
		e.put(t, target, "777777")
		const n = 20
		results := make(chan error, n)
		var start, wg sync.WaitGroup
		start.Add(1)
		for range n {
			wg.Go(func() {
				start.Wait()
				results <- e.store.Check(ctx, target, "777777")
			})
		}
		start.Done()
		wg.Wait()
		close(results)
		ok := 0
		for err := range results {
			if err == nil {
				ok++
				continue
			}
			requireCodeError(t, err, domain.CodeMissing, -1)
		}
		if ok != 1 {
			t.Fatalf("%d logins with one code, want exactly 1", ok)
		}
	})
}

// TestCodeStore_ShortValidity uses a one-second code: it expires by itself.
func TestCodeStore_ShortValidity(t *testing.T) {
	t.Parallel()
	e := newCodesEnv(t, cache.CodePolicy{Validity: time.Second, Resend: time.Second, Attempts: 3})
	ctx := context.Background()
	target := "email:brief@example.com"
	e.put(t, target, "123123")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := e.get(t, e.codeKey(target)); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a code valid for 1 s still there after 10 s")
		}
		time.Sleep(10 * time.Millisecond) // waiting for Redis to expire the key
	}
	requireCodeError(t, e.store.Check(ctx, target, "123123"), domain.CodeMissing, -1)
}
