package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func newUserCache(t *testing.T, p cache.Policy) (*env, *cache.UserCache) {
	t.Helper()
	e := setup(t, envOpts{Policy: p})
	return e, cache.NewUserCache(e.rdb, e.ks, p, testenv.Logger(t))
}

// Entries written together must not expire together: every TTL lies in [TTL, TTL+Jitter] (less
// the time since it was written) and they are spread over that window.
func TestUserCache_TTLsAreJitteredWithinBounds(t *testing.T) {
	t.Parallel()
	const n = 50

	t.Run("values", func(t *testing.T) {
		t.Parallel()
		p := cache.Policy{TTL: 10 * time.Minute, Jitter: 2 * time.Minute, NullTTL: time.Minute, LoadTimeout: 30 * time.Second}
		e, uc := newUserCache(t, p)
		start := time.Now()
		for i := range n {
			id := int64(1000 + i)
			_, err := uc.ByID(t.Context(), id, func(context.Context) (domain.User, error) {
				return domain.User{ID: id, Username: fmt.Sprintf("user%d", id)}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		ttls := make([]time.Duration, n)
		for i := range n {
			ttls[i] = e.pttl(t, e.ks.Key("user", "id", strconv.Itoa(1000+i)))
		}
		checkSpread(t, ttls, p.TTL-time.Since(start)-time.Millisecond, p.TTL+p.Jitter, p.Jitter/4)
	})

	t.Run("null markers", func(t *testing.T) {
		t.Parallel()
		p := cache.Policy{TTL: 10 * time.Minute, Jitter: 2 * time.Minute, NullTTL: time.Minute, LoadTimeout: 30 * time.Second}
		e, uc := newUserCache(t, p)
		start := time.Now()
		for i := range n {
			_, err := uc.ByUsername(t.Context(), fmt.Sprintf("Ghost%d", i), func(context.Context) (domain.User, error) {
				return domain.User{}, domain.ErrNotFound
			})
			if !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		}
		ttls := make([]time.Duration, n)
		for i := range n {
			ttls[i] = e.pttl(t, e.ks.Key("user", "name", fmt.Sprintf("ghost%d", i)))
		}
		checkSpread(t, ttls, p.NullTTL-time.Since(start)-time.Millisecond, p.NullTTL+p.NullTTL/4, p.NullTTL/16)
	})
}

// checkSpread asserts every ttl is in [lo, hi], that many are distinct, and that they span at
// least minSpread (uniform jitter makes a narrower spread astronomically unlikely). Callers pass
// lo = base TTL - time since the first write - 1ms (Redis truncates to whole milliseconds).
func checkSpread(t *testing.T, ttls []time.Duration, lo, hi, minSpread time.Duration) {
	t.Helper()
	distinct := map[time.Duration]bool{}
	minT, maxT := ttls[0], ttls[0]
	for i, d := range ttls {
		if d < lo || d > hi {
			t.Errorf("entry %d: PTTL %v outside [%v, %v]", i, d, lo, hi)
		}
		distinct[d] = true
		minT, maxT = min(minT, d), max(maxT, d)
	}
	if len(distinct) < len(ttls)/2 {
		t.Errorf("only %d distinct TTLs among %d entries: jitter is not spreading expiries", len(distinct), len(ttls))
	}
	if maxT-minT < minSpread {
		t.Errorf("TTLs span only %v (%v..%v), want at least %v", maxT-minT, minT, maxT, minSpread)
	}
	t.Logf("%d entries, %d distinct TTLs, %v..%v", len(ttls), len(distinct), minT, maxT)
}

func TestUserCache_NeverStoresPasswordHash(t *testing.T) {
	t.Parallel()
	e, uc := newUserCache(t, testPolicy)
	full := domain.User{ID: 7, Email: "seven@example.com", Username: "Seven", PasswordHash: "$argon2id$secret", Bio: "b", Image: "https://x/y.png", Role: domain.RoleUser}
	load := func(context.Context) (domain.User, error) { return full, nil }

	for i := range 2 { // the loading read and the cached read
		u, err := uc.ByID(t.Context(), 7, load)
		if err != nil {
			t.Fatal(err)
		}
		want := full
		want.PasswordHash = ""
		if u != want {
			t.Fatalf("read %d: got %+v, want %+v", i, u, want)
		}
	}
	raw, err := e.rdb.Get(t.Context(), e.ks.Key("user", "id", "7")).Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "argon2") || strings.Contains(strings.ToLower(raw), "password") {
		t.Fatalf("cached value carries the password hash: %s", raw)
	}
}

func TestUserCache_UsernameIsCaseInsensitiveAndInvalidateDropsAllKeys(t *testing.T) {
	t.Parallel()
	e, uc := newUserCache(t, testPolicy)
	loads := 0
	load := func(context.Context) (domain.User, error) {
		loads++
		return domain.User{ID: 9, Username: "MixedCase"}, nil
	}
	for _, name := range []string{"MixedCase", "mixedcase", "MIXEDCASE"} {
		if u, err := uc.ByUsername(t.Context(), name, load); err != nil || u.ID != 9 {
			t.Fatalf("ByUsername(%q) = %+v, %v", name, u, err)
		}
	}
	if _, err := uc.ByID(t.Context(), 9, load); err != nil {
		t.Fatal(err)
	}
	if loads != 2 {
		t.Fatalf("%d loads, want 2 (one per key; spellings of one name share a key)", loads)
	}
	nameKey, idKey := e.ks.Key("user", "name", "mixedcase"), e.ks.Key("user", "id", "9")
	if !e.exists(t, nameKey) || !e.exists(t, idKey) {
		t.Fatal("expected both keys cached")
	}
	if err := uc.Invalidate(t.Context(), 9, "MixedCase", "Renamed"); err != nil {
		t.Fatal(err)
	}
	if e.holdsEntry(t, nameKey) || e.holdsEntry(t, idKey) {
		t.Fatal("Invalidate left keys behind")
	}
}
