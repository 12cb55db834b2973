package repository_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// readConcurrently runs read in n goroutines at once against a cold cache. The first PostgreSQL
// load is held at a gate until every goroutine has looked in Redis and missed, so all n reads are
// in flight together; then the load is let go and every result collected.
func readConcurrently(t *testing.T, e *env, n int, read func(ctx context.Context, i int) (domain.User, error)) ([]domain.User, []error) {
	t.Helper()
	g := testenv.NewGate(t)
	e.q.gate = g
	missesBefore := e.cache.Stats().Misses.Load()

	var ready, done sync.WaitGroup
	ready.Add(n)
	got := make([]domain.User, n)
	errs := make([]error, n)
	for i := range n {
		done.Go(func() {
			ready.Done() // about to call
			got[i], errs[i] = read(t.Context(), i)
		})
	}
	ready.Wait()
	testenv.Recv(t, g.Entered(), "the first PostgreSQL load to start")
	testenv.WaitUntil(t, fmt.Sprintf("all %d readers missed the cache", n), func() bool {
		return e.cache.Stats().Misses.Load()-missesBefore == int64(n)
	})
	g.Open()
	done.Wait()
	return got, errs
}

// Acceptance: 200 concurrent first reads of one user cost exactly one PostgreSQL load.
func TestUserRepository_200ConcurrentFirstReads_OneDatabaseLoad(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	const n = 200

	t.Run("GetByID", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{})
		got, errs := readConcurrently(t, e, n, func(ctx context.Context, _ int) (domain.User, error) {
			return e.users.GetByID(ctx, u.ID)
		})
		for i := range n {
			if errs[i] != nil || !sameUser(got[i], public(u)) {
				t.Fatalf("reader %d: got %+v, %v; want %+v", i, got[i], errs[i], public(u))
			}
		}
		if c := e.q.byID.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads, want 1", c)
		}
	})

	t.Run("GetByUsername", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{Username: uniqueName("Carol")})
		// Every spelling of one username shares one cache key, so one flight.
		spellings := []string{u.Username, strings.ToLower(u.Username), strings.ToUpper(u.Username)}
		got, errs := readConcurrently(t, e, n, func(ctx context.Context, i int) (domain.User, error) {
			return e.users.GetByUsername(ctx, spellings[i%len(spellings)])
		})
		for i := range n {
			if errs[i] != nil || !sameUser(got[i], public(u)) {
				t.Fatalf("reader %d: got %+v, %v; want %+v", i, got[i], errs[i], public(u))
			}
		}
		if c := e.q.byName.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads, want 1", c)
		}
	})
}

// Acceptance: the caller whose request started the load gives up mid-load; the others still get
// the user, from that same single load.
func TestUserRepository_FirstCallerCancelledMidLoad_OthersSucceed(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	u := createUser(t, e.users, userOpts{})
	g := testenv.NewGate(t)
	e.q.gate = g

	ctx1, cancel1 := context.WithCancel(t.Context())
	defer cancel1()
	firstErr := make(chan error, 1)
	go func() {
		_, err := e.users.GetByID(ctx1, u.ID)
		firstErr <- err
	}()
	testenv.Recv(t, g.Entered(), "the first caller's load to start")

	const others = 20
	var ready, done sync.WaitGroup
	ready.Add(others)
	got := make([]domain.User, others)
	errs := make([]error, others)
	for i := range others {
		done.Go(func() {
			ready.Done()
			got[i], errs[i] = e.users.GetByID(t.Context(), u.ID)
		})
	}
	ready.Wait()
	testenv.WaitUntil(t, "all callers missed the cache", func() bool { return e.cache.Stats().Misses.Load() == others+1 })

	cancel1()
	if err := testenv.Recv(t, firstErr, "the cancelled caller to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: err = %v, want context.Canceled", err)
	}
	g.Open()
	done.Wait()
	for i := range others {
		if errs[i] != nil || !sameUser(got[i], public(u)) {
			t.Fatalf("caller %d: got %+v, %v; want %+v", i, got[i], errs[i], public(u))
		}
	}
	if c := e.q.byID.Load(); c != 1 {
		t.Errorf("%d PostgreSQL loads, want 1", c)
	}
}

// Acceptance: reads of a username that does not exist are answered by a short-lived null marker.
func TestUserRepository_MissingUsername_NullMarker(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("100 sequential reads, 1 load", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		ghost := uniqueName("ghost")
		for i := range 100 {
			if _, err := e.users.GetByUsername(t.Context(), ghost); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("read %d: err = %v, want ErrNotFound", i, err)
			}
		}
		if c := e.q.byName.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads, want 1", c)
		}
	})

	t.Run("100 concurrent reads, 1 load", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		ghost := uniqueName("ghost")
		_, errs := readConcurrently(t, e, 100, func(ctx context.Context, _ int) (domain.User, error) {
			return e.users.GetByUsername(ctx, ghost)
		})
		for i, err := range errs {
			if !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("reader %d: err = %v, want ErrNotFound", i, err)
			}
		}
		if c := e.q.byName.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads, want 1", c)
		}
	})

	t.Run("GetByID of a missing id, 1 load", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		for range 10 {
			if _, err := e.users.GetByID(t.Context(), 1<<60); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		}
		if c := e.q.byID.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads, want 1", c)
		}
	})

	t.Run("marker expires", func(t *testing.T) {
		t.Parallel()
		p := testPolicy
		p.NullTTL = 50 * time.Millisecond
		e := setup(t, db, envOpts{Policy: p})
		ghost := uniqueName("ghost")
		read := func() {
			t.Helper()
			if _, err := e.users.GetByUsername(t.Context(), ghost); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		}
		before := time.Now()
		read()
		checkShortNullPTTL(t, e.pttl(t, e.nameKey(ghost)), p, before)
		testenv.WaitUntil(t, "the null marker expired", func() bool { return !e.exists(t, e.nameKey(ghost)) })
		read()
		if c := e.q.byName.Load(); c != 2 {
			t.Fatalf("%d PostgreSQL loads after expiry, want 2", c)
		}
		// Deleting the marker has the same effect as its expiry.
		if err := e.rdb.Del(t.Context(), e.nameKey(ghost)).Err(); err != nil {
			t.Fatal(err)
		}
		read()
		if c := e.q.byName.Load(); c != 3 {
			t.Fatalf("%d PostgreSQL loads after delete, want 3", c)
		}
	})

	t.Run("Create removes the stale marker", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{}) // NullTTL of a minute: only Create can remove the marker
		name := uniqueName("Latecomer")
		if _, err := e.users.GetByUsername(t.Context(), name); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		if !e.exists(t, e.nameKey(name)) {
			t.Fatal("no null marker cached")
		}
		u := createUser(t, e.users, userOpts{Username: name})
		got, err := e.users.GetByUsername(t.Context(), strings.ToLower(name))
		if err != nil || !sameUser(got, public(u)) {
			t.Fatalf("read after Create: %+v, %v; want %+v", got, err, public(u))
		}
		if c := e.q.byName.Load(); c != 2 {
			t.Errorf("%d PostgreSQL loads, want 2", c)
		}
	})
}

// Acceptance: cached entries expire at different times, within [TTL, TTL+Jitter]; null markers
// within [NullTTL, NullTTL+NullTTL/4].
func TestUserRepository_CachedTTLsAreJittered(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	p := testPolicy
	const n = 50

	users := make([]domain.User, n)
	for i := range users {
		users[i] = createUser(t, e.users, userOpts{})
	}
	start := time.Now()
	for _, u := range users {
		if _, err := e.users.GetByID(t.Context(), u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.users.GetByUsername(t.Context(), u.Username+"_nobody"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	}
	values, nulls := make([]time.Duration, n), make([]time.Duration, n)
	for i, u := range users {
		values[i] = e.pttl(t, e.idKey(u.ID))
		nulls[i] = e.pttl(t, e.nameKey(u.Username+"_nobody"))
	}
	elapsed := time.Since(start)
	checkSpread(t, "values", values, p.TTL-elapsed-time.Millisecond, p.TTL+p.Jitter, p.Jitter/4)
	checkSpread(t, "null markers", nulls, p.NullTTL-elapsed-time.Millisecond, p.NullTTL+p.NullTTL/4, p.NullTTL/16)
}

// checkSpread asserts every ttl is in [lo, hi], that many are distinct, and that they span at
// least minSpread (uniform jitter makes a narrower spread astronomically unlikely). Callers pass
// lo = base TTL - time since the first write - 1ms (Redis truncates to whole milliseconds).
func checkSpread(t *testing.T, what string, ttls []time.Duration, lo, hi, minSpread time.Duration) {
	t.Helper()
	distinct := map[time.Duration]bool{}
	minT, maxT := ttls[0], ttls[0]
	for i, d := range ttls {
		if d < lo || d > hi {
			t.Errorf("%s: entry %d: PTTL %v outside [%v, %v]", what, i, d, lo, hi)
		}
		distinct[d] = true
		minT, maxT = min(minT, d), max(maxT, d)
	}
	if len(distinct) < len(ttls)/2 {
		t.Errorf("%s: only %d distinct TTLs among %d entries", what, len(distinct), len(ttls))
	}
	if maxT-minT < minSpread {
		t.Errorf("%s: TTLs span only %v (%v..%v), want at least %v", what, maxT-minT, minT, maxT, minSpread)
	}
	t.Logf("%s: %d entries, %d distinct TTLs, %v..%v", what, len(ttls), len(distinct), minT, maxT)
}

// Acceptance: with Redis down every operation is served from PostgreSQL, and the cache counts the
// fallbacks.
func TestUserRepository_RedisDown_ServedFromPostgres(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{DeadRedis: true})
	ctx := t.Context()

	u := createUser(t, e.users, userOpts{Username: uniqueName("Dora")})
	if got, err := e.users.GetByID(ctx, u.ID); err != nil || !sameUser(got, public(u)) {
		t.Fatalf("GetByID: %+v, %v", got, err)
	}
	if got, err := e.users.GetByUsername(ctx, strings.ToUpper(u.Username)); err != nil || !sameUser(got, public(u)) {
		t.Fatalf("GetByUsername: %+v, %v", got, err)
	}
	if _, err := e.users.GetByUsername(ctx, uniqueName("ghost")); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("GetByUsername of a missing user: err = %v, want ErrNotFound", err)
	}
	if got, err := e.users.GetByEmail(ctx, u.Email); err != nil || !sameUser(got, u) {
		t.Fatalf("GetByEmail: %+v, %v", got, err)
	}
	updated, err := e.users.Update(ctx, u.ID, func(u *domain.User) error { u.Bio = "written while Redis was down"; return nil })
	if err != nil || updated.Bio != "written while Redis was down" {
		t.Fatalf("Update: %+v, %v", updated, err)
	}
	if got, err := e.users.GetByID(ctx, u.ID); err != nil || got.Bio != updated.Bio {
		t.Fatalf("GetByID after Update: %+v, %v", got, err)
	}

	if f := e.cache.Stats().Fallbacks.Load(); f != 4 {
		t.Errorf("Stats.Fallbacks = %d, want 4 (one per cached read)", f)
	}
	if id, name := e.q.byID.Load(), e.q.byName.Load(); id != 2 || name != 2 {
		t.Errorf("PostgreSQL loads: %d by id, %d by name; want 2 and 2 (nothing can be cached)", id, name)
	}
}

// Acceptance: writes go to PostgreSQL first and then drop every cache entry they make stale;
// constraint violations come back as domain errors.
func TestUserRepository_Writes(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("Update drops the id, old-username and new-username entries", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		ctx := t.Context()
		oldName, newName := uniqueName("Alice"), uniqueName("Alicia")
		u := createUser(t, e.users, userOpts{Username: oldName})
		// Warm all three keys: the user by id and by its name, and a null marker for the new name.
		if _, err := e.users.GetByID(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.users.GetByUsername(ctx, oldName); err != nil {
			t.Fatal(err)
		}
		if _, err := e.users.GetByUsername(ctx, newName); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		keys := []string{e.idKey(u.ID), e.nameKey(oldName), e.nameKey(newName)}
		for _, k := range keys {
			if !e.exists(t, k) {
				t.Fatalf("%s not cached before the update", k)
			}
		}

		updated, err := e.users.Update(ctx, u.ID, func(u *domain.User) error {
			u.Username, u.Bio = newName, "renamed"
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if updated.Username != newName || updated.Bio != "renamed" || updated.UpdatedAt.Before(u.UpdatedAt) {
			t.Fatalf("Update returned %+v", updated)
		}
		for _, k := range keys {
			if e.exists(t, k) {
				t.Errorf("%s still cached after the update", k)
			}
		}

		if got, err := e.users.GetByID(ctx, u.ID); err != nil || !sameUser(got, public(updated)) {
			t.Errorf("GetByID after update: %+v, %v; want %+v", got, err, public(updated))
		}
		if got, err := e.users.GetByUsername(ctx, strings.ToUpper(newName)); err != nil || !sameUser(got, public(updated)) {
			t.Errorf("GetByUsername(new) after update: %+v, %v", got, err)
		}
		if _, err := e.users.GetByUsername(ctx, oldName); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("GetByUsername(old) after rename: err = %v, want ErrNotFound", err)
		}
		if id, name := e.q.byID.Load(), e.q.byName.Load(); id != 2 || name != 4 {
			t.Errorf("PostgreSQL loads: %d by id, %d by name; want 2 and 4 (each key reloaded once)", id, name)
		}
	})

	t.Run("Update whose change fails rolls back", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{Bio: "original"})
		boom := errors.New("change refused")
		_, err := e.users.Update(t.Context(), u.ID, func(u *domain.User) error {
			u.Bio, u.Username = "half-applied", uniqueName("half")
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the change's error", err)
		}
		if got, err := e.users.GetByEmail(t.Context(), u.Email); err != nil || !sameUser(got, u) {
			t.Fatalf("row after the failed update: %+v, %v; want %+v", got, err, u)
		}
	})

	t.Run("Update of a missing user", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		called := false
		_, err := e.users.Update(t.Context(), 1<<60, func(*domain.User) error { called = true; return nil })
		if !errors.Is(err, domain.ErrNotFound) || called {
			t.Fatalf("err = %v, change called %v; want ErrNotFound without calling change", err, called)
		}
	})

	t.Run("Create with a taken email", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{})
		_, err := e.users.Create(t.Context(), domain.User{Email: u.Email, Username: uniqueName("other"), PasswordHash: "h"})
		if !errors.Is(err, domain.ErrEmailTaken) {
			t.Fatalf("err = %v, want ErrEmailTaken", err)
		}
	})

	t.Run("Create with a taken username in another case", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{Username: uniqueName("Bob")})
		_, err := e.users.Create(t.Context(), domain.User{
			Email: uniqueName("bob") + "@example.com", Username: strings.ToUpper(u.Username), PasswordHash: "h",
		})
		if !errors.Is(err, domain.ErrUsernameTaken) {
			t.Fatalf("err = %v, want ErrUsernameTaken", err)
		}
	})

	t.Run("Update to a taken email or username", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		taken := createUser(t, e.users, userOpts{Username: uniqueName("Taken")})
		u := createUser(t, e.users, userOpts{})

		_, err := e.users.Update(t.Context(), u.ID, func(u *domain.User) error { u.Email = taken.Email; return nil })
		if !errors.Is(err, domain.ErrEmailTaken) {
			t.Errorf("taken email: err = %v, want ErrEmailTaken", err)
		}
		_, err = e.users.Update(t.Context(), u.ID, func(u *domain.User) error { u.Username = strings.ToLower(taken.Username); return nil })
		if !errors.Is(err, domain.ErrUsernameTaken) {
			t.Errorf("taken username: err = %v, want ErrUsernameTaken", err)
		}
		if got, err := e.users.GetByEmail(t.Context(), u.Email); err != nil || !sameUser(got, u) {
			t.Errorf("row after the rejected updates: %+v, %v; want %+v", got, err, u)
		}
	})

	t.Run("cached reads omit the password hash, GetByEmail carries it", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{Bio: "bio", Image: "https://example.com/a.png"})
		if u.PasswordHash == "" || u.ID == 0 || u.CreatedAt.IsZero() {
			t.Fatalf("Create returned %+v", u)
		}
		for i := range 2 { // the loading read, then the cached one
			if got, err := e.users.GetByID(t.Context(), u.ID); err != nil || !sameUser(got, public(u)) {
				t.Fatalf("GetByID #%d: %+v, %v; want %+v", i, got, err, public(u))
			}
			if got, err := e.users.GetByUsername(t.Context(), u.Username); err != nil || !sameUser(got, public(u)) {
				t.Fatalf("GetByUsername #%d: %+v, %v; want %+v", i, got, err, public(u))
			}
		}
		if got, err := e.users.GetByEmail(t.Context(), u.Email); err != nil || !sameUser(got, u) {
			t.Fatalf("GetByEmail: %+v, %v; want %+v", got, err, u)
		}
		if _, err := e.users.GetByEmail(t.Context(), "nobody-"+u.Email); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("GetByEmail of a missing email: err = %v, want ErrNotFound", err)
		}
		raw, err := e.rdb.Get(t.Context(), e.idKey(u.ID)).Result()
		if err != nil || strings.Contains(raw, u.PasswordHash) {
			t.Fatalf("cached value %q (%v) carries the hash", raw, err)
		}
	})

	t.Run("ReplacePasswordHash swaps only when the old hash matches", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u := createUser(t, e.users, userOpts{PasswordHash: "hash-1"})
		hashOf := func() string {
			t.Helper()
			got, err := e.users.GetByEmail(t.Context(), u.Email)
			if err != nil {
				t.Fatal(err)
			}
			return got.PasswordHash
		}
		if err := e.users.ReplacePasswordHash(t.Context(), u.ID, "not-the-hash", "hash-2"); err != nil {
			t.Fatal(err)
		}
		if h := hashOf(); h != "hash-1" {
			t.Fatalf("hash replaced despite a stale old hash: %q", h)
		}
		if err := e.users.ReplacePasswordHash(t.Context(), u.ID, "hash-1", "hash-2"); err != nil {
			t.Fatal(err)
		}
		if h := hashOf(); h != "hash-2" {
			t.Fatalf("hash = %q, want hash-2", h)
		}
	})
}
