package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// These tests run against the real Redis: the lock's guarantees are Redis's (SET NX PX, and the
// scripts' atomic check of the token).

type lockEnv struct {
	rdb    redis.UniversalClient // to look at and tamper with the lock keys
	ks     cache.Keyspace
	locker *cache.Locker
}

func newLockEnv(t *testing.T) *lockEnv {
	t.Helper()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	return &lockEnv{rdb: r.Client, ks: ks, locker: cache.NewLocker(testenv.NewRedis(t).Client, ks)}
}

func (e *lockEnv) key(name string) string { return e.ks.Key("lock", name) }

// take takes the lock name and returns it with the token it wrote (read back at once: a lock just
// taken with SET NX holds its holder's token).
func (e *lockEnv) take(t *testing.T, name string, ttl time.Duration) (*cache.Lock, string) {
	t.Helper()
	lk, ok, err := e.locker.TryLock(t.Context(), name, ttl)
	if err != nil || !ok {
		t.Fatalf("TryLock(%s): ok=%v err=%v, want the lock", name, ok, err)
	}
	tok, err := e.rdb.Get(t.Context(), e.key(name)).Result()
	if err != nil {
		t.Fatalf("GET %s right after taking it: %v", e.key(name), err)
	}
	return lk, tok
}

// value returns what the lock key holds ("" when it does not exist).
func (e *lockEnv) value(t *testing.T, name string) string {
	t.Helper()
	v, err := e.rdb.Get(context.Background(), e.key(name)).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		t.Fatalf("GET %s: %v", e.key(name), err)
	}
	return v
}

func (e *lockEnv) pttl(t *testing.T, name string) time.Duration {
	t.Helper()
	d, err := e.rdb.PTTL(context.Background(), e.key(name)).Result()
	if err != nil {
		t.Fatalf("PTTL %s: %v", e.key(name), err)
	}
	return d
}

func TestLocker_ExactlyOneOfManyContendersHolds(t *testing.T) {
	t.Parallel()
	e := newLockEnv(t)
	const n = 50
	var holders atomic.Int64
	locks := make([]*cache.Lock, n)
	errs := make([]error, n)
	testenv.Together(n, func(i int) {
		lk, ok, err := e.locker.TryLock(t.Context(), "contended", 10*time.Second)
		errs[i] = err
		if ok {
			holders.Add(1)
			locks[i] = lk
		} else if lk != nil {
			t.Errorf("contender %d: not ok but got a lock", i)
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("contender %d: %v", i, err)
		}
	}
	if h := holders.Load(); h != 1 {
		t.Fatalf("%d contenders hold the lock, want exactly 1", h)
	}
	var winner *cache.Lock
	for _, lk := range locks {
		if lk != nil {
			winner = lk
		}
	}
	if d := e.pttl(t, "contended"); d <= 0 || d > 10*time.Second {
		t.Fatalf("lock PTTL = %v, want within (0, 10s]", d)
	}
	// Once released, the next contender gets it.
	if err := winner.Release(t.Context()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if v := e.value(t, "contended"); v != "" {
		t.Fatalf("the key still holds %q after Release", v)
	}
	e.take(t, "contended", time.Second)
}

func TestLocker_NamesAreIndependent(t *testing.T) {
	t.Parallel()
	e := newLockEnv(t)
	e.take(t, "a", 10*time.Second)
	e.take(t, "b", 10*time.Second)
	if _, ok, err := e.locker.TryLock(t.Context(), "a", 10*time.Second); ok || err != nil {
		t.Fatalf("second TryLock(a): ok=%v err=%v, want not ok and no error", ok, err)
	}
}

func TestLock_ExpiredHolderCannotReleaseTheNextHoldersLock(t *testing.T) {
	t.Parallel()
	e := newLockEnv(t)
	// Taken without take's read-back: on a loaded machine 50 ms can pass before that GET, and the
	// expiry is what this test waits for anyway.
	old, ok, err := e.locker.TryLock(t.Context(), "job", 50*time.Millisecond)
	if err != nil || !ok {
		t.Fatalf("TryLock(job): ok=%v err=%v, want the lock", ok, err)
	}
	testenv.WaitUntil(t, "the first holder's lock expires", func() bool { return e.value(t, "job") == "" }, 10*time.Second)

	next, nextTok := e.take(t, "job", 10*time.Second)
	if err := old.Release(t.Context()); !errors.Is(err, cache.ErrLockLost) {
		t.Fatalf("the expired holder's Release = %v, want ErrLockLost", err)
	}
	if err := old.Renew(t.Context()); !errors.Is(err, cache.ErrLockLost) {
		t.Fatalf("the expired holder's Renew = %v, want ErrLockLost", err)
	}
	if v := e.value(t, "job"); v != nextTok {
		t.Fatalf("the lock holds %q after the old holder's Release and Renew, want the new holder's %q", v, nextTok)
	}
	if d := e.pttl(t, "job"); d <= 9*time.Second {
		t.Fatalf("the new holder's PTTL is %v: the old holder's Renew changed it", d)
	}
	if err := next.Release(t.Context()); err != nil {
		t.Fatalf("the new holder's Release: %v", err)
	}
}

func TestLock_RenewalKeepsALongRunTheHolder(t *testing.T) {
	t.Parallel()
	// A renewal that fails less than a lease after the previous one started is a bug; one that
	// fails later only means this test process stalled past the lease (an overloaded machine),
	// and the attempt is repeated.
	const ttl = 300 * time.Millisecond
	for attempt := 1; ; attempt++ {
		stall := renewalKeepsTheHolder(t, ttl, fmt.Sprintf("long-%d", attempt))
		if stall == 0 {
			return
		}
		if attempt == 3 {
			t.Fatalf("the test process stalled past the lease in %d attempts in a row", attempt)
		}
		t.Logf("attempt %d: no renewal for %v, longer than the %v lease; trying again", attempt, stall, ttl)
	}
}

// renewalKeepsTheHolder holds the lock name through more than three leases by renewing it, and
// checks it stays ours. It returns how long renewal had paused when the lock was lost to a stall
// of the test process, else 0.
func renewalKeepsTheHolder(t *testing.T, ttl time.Duration, name string) time.Duration {
	t.Helper()
	e := newLockEnv(t)
	start := time.Now()
	lk, tok := e.take(t, name, ttl)
	last := start // the lease runs at least ttl from when the last successful call started
	renewals, extended := 0, 0
	// Renew whenever a sixth of the lease has gone by (the job renews every third; renewing
	// earlier leaves a stalled test more slack), until the holding has lasted well past three
	// leases.
	for time.Since(start) < 3*ttl+ttl/2 {
		var before time.Duration
		testenv.WaitUntil(t, "a sixth of the lease goes by", func() bool { before = e.pttl(t, name); return before <= ttl*5/6 }, 10*time.Second)
		call := time.Now()
		if err := lk.Renew(t.Context()); err != nil {
			gap := time.Since(last)
			if !errors.Is(err, cache.ErrLockLost) || gap < ttl*9/10 {
				t.Fatalf("renewal %d, %v after the previous one: %v", renewals+1, gap, err)
			}
			return gap
		}
		last = call
		renewals++
		d := e.pttl(t, name)
		if d <= 0 || d > ttl {
			t.Fatalf("PTTL after renewal %d = %v, want within (0, %v]", renewals, d, ttl)
		}
		if d > before {
			extended++
		}
	}
	t.Logf("%d renewals over %v with a %v lease", renewals, time.Since(start).Round(time.Millisecond), ttl)
	if renewals < 4 || extended == 0 {
		t.Fatalf("%d renewals, %d of them lengthened the lease", renewals, extended)
	}
	if v := e.value(t, name); v != tok {
		t.Fatalf("after %v the lock holds %q, want our token %q", time.Since(start), v, tok)
	}
	if _, ok, err := e.locker.TryLock(t.Context(), name, ttl); ok || err != nil {
		t.Fatalf("a contender's TryLock: ok=%v err=%v, want not ok", ok, err)
	}
	if err := lk.Release(t.Context()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	return 0
}

func TestLock_LostLock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tamper func(t *testing.T, e *lockEnv, key string) // takes the lock away from its holder
		want   string                                     // what the key must still hold afterwards
	}{
		{
			name: "deleted",
			tamper: func(t *testing.T, e *lockEnv, key string) {
				if err := e.rdb.Del(t.Context(), key).Err(); err != nil {
					t.Fatal(err)
				}
			},
			want: "",
		},
		{
			name: "taken over by another holder",
			tamper: func(t *testing.T, e *lockEnv, key string) {
				if err := e.rdb.Set(t.Context(), key, "someone-else", time.Minute).Err(); err != nil {
					t.Fatal(err)
				}
			},
			want: "someone-else",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newLockEnv(t)
			lk, _ := e.take(t, "lost", 10*time.Second)
			tc.tamper(t, e, e.key("lost"))
			if err := lk.Renew(t.Context()); !errors.Is(err, cache.ErrLockLost) {
				t.Fatalf("Renew = %v, want ErrLockLost", err)
			}
			if err := lk.Release(t.Context()); !errors.Is(err, cache.ErrLockLost) {
				t.Fatalf("Release = %v, want ErrLockLost", err)
			}
			if v := e.value(t, "lost"); v != tc.want {
				t.Fatalf("the key holds %q, want %q (untouched by the old holder)", v, tc.want)
			}
			if tc.want != "" {
				if d := e.pttl(t, "lost"); d <= 50*time.Second {
					t.Fatalf("the other holder's PTTL is %v: the old holder's Renew changed it", d)
				}
			}
		})
	}
}

func TestLock_ReleaseTwice(t *testing.T) {
	t.Parallel()
	e := newLockEnv(t)
	lk, _ := e.take(t, "twice", 10*time.Second)
	if err := lk.Release(t.Context()); err != nil {
		t.Fatalf("first Release: %v", err)
	}
	if err := lk.Release(t.Context()); !errors.Is(err, cache.ErrLockLost) {
		t.Fatalf("second Release = %v, want ErrLockLost", err)
	}
	if lk.TTL() != 10*time.Second {
		t.Fatalf("TTL() = %v", lk.TTL())
	}
}

func TestLocker_RedisDown(t *testing.T) {
	t.Parallel()
	locker := cache.NewLocker(testenv.DeadRedis(t), cache.Keyspace("inkwelltest:dead:"))
	lk, ok, err := locker.TryLock(t.Context(), "job", time.Second)
	if err == nil || ok || lk != nil {
		t.Fatalf("TryLock on a dead Redis = %v, %v, %v; want an error and no lock", lk, ok, err)
	}
	if errors.Is(err, cache.ErrLockLost) {
		t.Fatalf("a Redis failure reported as ErrLockLost: %v", err)
	}
}
