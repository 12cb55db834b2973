package cache_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// hotClock is the injected clock of the hot-list tests, moved by hand.
type hotClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *hotClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *hotClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// hotTTLs are the lifetimes under test: Redis keeps the list for an hour, a process for a minute.
var hotTTLs = cache.HotListTTLs{Redis: time.Hour, Local: time.Minute}

type hotEnv struct {
	rdb   redis.UniversalClient // raw client on the live Redis, to look at and tamper with the key
	ks    cache.Keyspace
	key   string
	clock *hotClock
	// connect returns a client for one cache instance: the live Redis, a dead port, or the
	// private server.
	connect func(t *testing.T) redis.UniversalClient
}

// hotOpts selects the Redis the caches talk to.
type hotOpts struct {
	DeadRedis bool                 // nothing listens
	Server    *testenv.RedisServer // a private redis-server the test can stop
}

func newHotEnv(t *testing.T, o hotOpts) *hotEnv {
	t.Helper()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	e := &hotEnv{rdb: r.Client, ks: ks, key: ks.Key("hot", "articles"),
		clock: &hotClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
	switch {
	case o.DeadRedis:
		e.connect = func(t *testing.T) redis.UniversalClient { return testenv.DeadRedis(t) }
	case o.Server != nil:
		e.connect = func(t *testing.T) redis.UniversalClient {
			rdb := redis.NewClient(&redis.Options{Addr: o.Server.Addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1,
				DialerRetries: 1, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
			t.Cleanup(func() { _ = rdb.Close() })
			return rdb
		}
		e.rdb = e.connect(t) // the private server holds the key
	default:
		e.connect = func(t *testing.T) redis.UniversalClient { return testenv.NewRedis(t).Client }
	}
	return e
}

// hotInstance is one process's cache, with the commands it sent to Redis.
type hotInstance struct {
	*cache.HotListCache
	cmds *commandCounter
}

// instance returns a new cache, as another process would have: an empty local copy, the same
// Redis key and the same clock.
func (e *hotEnv) instance(t *testing.T) *hotInstance {
	t.Helper()
	rdb := e.connect(t)
	cmds := &commandCounter{}
	rdb.AddHook(cmds)
	return &hotInstance{HotListCache: cache.NewHotListCache(rdb, e.ks, hotTTLs, e.clock.Now, testenv.Logger(t), nil), cmds: cmds}
}

// since returns the commands sent after the first n.
func (i *hotInstance) since(n int) []string { return i.cmds.commands()[n:] }

// hotList is a computed list of n entries whose titles carry tag, best first.
func hotList(tag string, n int, computed time.Time) domain.HotList {
	l := domain.HotList{Entries: make([]domain.HotEntry, n), ComputedAt: computed}
	for i := range n {
		p := computed.Add(-time.Duration(i+1) * time.Hour)
		l.Entries[i] = domain.HotEntry{
			Article: domain.Article{ID: int64(100 + i), Slug: fmt.Sprintf("%s-%d", tag, i), AuthorID: int64(7 + i%2),
				Title: fmt.Sprintf("%s %d", tag, i), Description: "about " + tag, Tags: []string{"go", tag},
				Status: domain.StatusPublished, Version: int32(1 + i), CreatedAt: p, UpdatedAt: p.Add(time.Minute), PublishedAt: &p},
			Author:   domain.Profile{Username: fmt.Sprintf("author%d", 7+i%2), Bio: "bio", Image: "https://example.com/a.png"},
			Counters: domain.Counters{Reads: int64(1000 - i), Likes: int64(90 - i), Collects: int64(i)},
			Score:    float64(n-i) + 0.125,
		}
	}
	return l
}

func requireList(t *testing.T, got domain.HotList, err error, want domain.HotList) {
	t.Helper()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Load =\n  %+v\nwant\n  %+v", got, want)
	}
}

func requireCommands(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("Redis commands %v, want %v", got, want)
	}
}

func TestHotListCache_SaveThenLoadIsALocalHit(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, hotOpts{})
	c := e.instance(t)
	want := hotList("first", 3, e.clock.Now())
	if err := c.Save(t.Context(), want); err != nil {
		t.Fatalf("Save: %v", err)
	}
	requireCommands(t, c.since(0), "set")
	for range 3 {
		got, err := c.Load(t.Context())
		requireList(t, got, err, want)
	}
	e.clock.Advance(hotTTLs.Local - time.Nanosecond)
	got, err := c.Load(t.Context())
	requireList(t, got, err, want)
	requireCommands(t, c.since(1)) // four loads inside LocalTTL, not one Redis command
	// Redis keeps the list for its own, longer lifetime.
	if d, err := e.rdb.PTTL(t.Context(), e.key).Result(); err != nil || d <= hotTTLs.Redis-time.Minute || d > hotTTLs.Redis {
		t.Fatalf("PTTL of the Redis copy = %v (%v), want about %v", d, err, hotTTLs.Redis)
	}
}

func TestHotListCache_AfterLocalTTLRedisRefillsTheLocalCopy(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, hotOpts{})
	a, b := e.instance(t), e.instance(t)
	old := hotList("old", 2, e.clock.Now())
	if err := a.Save(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	// Another instance ranks later and writes a newer list to Redis.
	e.clock.Advance(30 * time.Second)
	newer := hotList("newer", 4, e.clock.Now())
	if err := b.Save(t.Context(), newer); err != nil {
		t.Fatal(err)
	}
	// a's local copy is still fresh: it serves it without asking Redis.
	n := len(a.cmds.commands())
	got, err := a.Load(t.Context())
	requireList(t, got, err, old)
	requireCommands(t, a.since(n))

	// Once LocalTTL has passed since a's copy was made, a reads Redis once and keeps the result.
	e.clock.Advance(30 * time.Second)
	got, err = a.Load(t.Context())
	requireList(t, got, err, newer)
	requireCommands(t, a.since(n), "get")
	got, err = a.Load(t.Context())
	requireList(t, got, err, newer)
	requireCommands(t, a.since(n), "get") // refilled: no second read
	e.clock.Advance(hotTTLs.Local)
	got, err = a.Load(t.Context())
	requireList(t, got, err, newer)
	requireCommands(t, a.since(n), "get", "get")
}

func TestHotListCache_AnotherProcessReadsTheListFromRedis(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, hotOpts{})
	writer, reader := e.instance(t), e.instance(t)
	want := hotList("shared", 5, e.clock.Now())
	if err := writer.Save(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, err := reader.Load(t.Context())
	requireList(t, got, err, want) // every field survives the trip through Redis
	got, err = reader.Load(t.Context())
	requireList(t, got, err, want)
	requireCommands(t, reader.since(0), "get")
}

func TestHotListCache_NothingAnywhere(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, hotOpts{})
	c := e.instance(t)
	if _, err := c.Load(t.Context()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Load with nothing in Redis or the process = %v, want domain.ErrNotFound", err)
	}
	// Nothing was cached locally by the miss: a list saved by another process is seen at once.
	want := hotList("later", 1, e.clock.Now())
	if err := e.instance(t).Save(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, err := c.Load(t.Context())
	requireList(t, got, err, want)
}

func TestHotListCache_StaleLocalCopyWhenRedisFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// breakRedis makes Redis fail (or lose the list) after the list was saved.
		breakRedis func(t *testing.T, e *hotEnv, srv *testenv.RedisServer)
	}{
		{name: "Redis is down", breakRedis: func(t *testing.T, e *hotEnv, srv *testenv.RedisServer) { srv.Stop() }},
		{name: "the Redis copy is gone", breakRedis: func(t *testing.T, e *hotEnv, srv *testenv.RedisServer) {
			if err := e.rdb.Del(t.Context(), e.key).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the Redis copy is unreadable", breakRedis: func(t *testing.T, e *hotEnv, srv *testenv.RedisServer) {
			if err := e.rdb.Set(t.Context(), e.key, "{not json", time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testenv.StartRedisServer(t)
			e := newHotEnv(t, hotOpts{Server: srv})
			c := e.instance(t)
			want := hotList("stale", 3, e.clock.Now())
			if err := c.Save(t.Context(), want); err != nil {
				t.Fatal(err)
			}
			tc.breakRedis(t, e, srv)
			e.clock.Advance(10 * hotTTLs.Local) // the local copy is long stale
			n := len(c.cmds.commands())
			got, err := c.Load(t.Context())
			requireList(t, got, err, want)
			requireCommands(t, c.since(n), "get") // it did try Redis first
			// A fresh process has no copy to fall back on.
			_, err = e.instance(t).Load(t.Context())
			if err == nil {
				t.Fatal("a process without a local copy loaded a list")
			}
		})
	}
}

func TestHotListCache_RedisDown(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, hotOpts{DeadRedis: true})
	c := e.instance(t)
	// No list anywhere and Redis unreachable: an error, and not "there is no list".
	_, err := c.Load(t.Context())
	if err == nil || errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Load on a dead Redis without a local copy = %v, want a Redis error", err)
	}
	// A save reports the Redis failure but still keeps the list in the process, where it is served.
	want := hotList("local", 2, e.clock.Now())
	if err := c.Save(t.Context(), want); err == nil {
		t.Fatal("Save on a dead Redis reported no error")
	}
	got, err := c.Load(t.Context())
	requireList(t, got, err, want)
	e.clock.Advance(hotTTLs.Local)
	got, err = c.Load(t.Context())
	requireList(t, got, err, want)
}

// A list kept by the process (rebuilt from PostgreSQL while Redis failed) is served like a fetched
// one: from the process while fresh, then as the stale copy while Redis still fails; it is never
// written to Redis, and a list Redis holds replaces it once the copy is stale.
func TestHotListCache_KeepServesAListWithoutWritingRedis(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, hotOpts{})
	c := e.instance(t)
	kept := hotList("kept", 2, e.clock.Now().Add(-time.Minute))
	c.Keep(kept)
	requireCommands(t, c.since(0))
	got, err := c.Load(t.Context())
	requireList(t, got, err, kept)
	requireCommands(t, c.since(0)) // fresh: not one Redis command
	if n, err := e.rdb.Exists(t.Context(), e.key).Result(); err != nil || n != 0 {
		t.Fatalf("Keep wrote the list to Redis (%d, %v)", n, err)
	}

	// Redis holds no list: the stale kept copy is served.
	e.clock.Advance(hotTTLs.Local)
	got, err = c.Load(t.Context())
	requireList(t, got, err, kept)
	requireCommands(t, c.since(0), "get")

	// Another instance ranks and Redis has its list: the stale copy gives way to it.
	ranked := hotList("ranked", 3, e.clock.Now())
	if err := e.instance(t).Save(t.Context(), ranked); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(hotTTLs.Local)
	got, err = c.Load(t.Context())
	requireList(t, got, err, ranked)
}

// Loads racing with saves see either list, whole (run with -race).
func TestHotListCache_ConcurrentSavesAndLoads(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, hotOpts{})
	c := e.instance(t)
	lists := []domain.HotList{hotList("one", 2, e.clock.Now()), hotList("two", 3, e.clock.Now())}
	if err := c.Save(t.Context(), lists[0]); err != nil {
		t.Fatal(err)
	}
	testenv.Together(40, func(i int) {
		if i%4 == 0 {
			if err := c.Save(context.Background(), lists[i%8/4]); err != nil {
				t.Errorf("Save: %v", err)
			}
			return
		}
		got, err := c.Load(context.Background())
		if err != nil || !(reflect.DeepEqual(got, lists[0]) || reflect.DeepEqual(got, lists[1])) {
			t.Errorf("Load = %+v, %v; want one of the saved lists", got, err)
		}
	})
}

// Acceptance (issue #13): a list saved by one instance replaces another instance's in-process copy
// as soon as the broadcast reaches it, long before the copy's own lifetime ends.
func TestHotListCache_NewListReachesOtherInstancesAtOnce(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	clock := &hotClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	instance := func(received chan []string) *cache.HotListCache {
		state := make(chan bool, 4)
		b, stop := cache.NewTunedBroadcaster(testenv.NewRedisClient(t, nil), ks, testenv.Logger(t), cache.BroadcastTuning{
			State: func(up bool) { state <- up },
			Received: func(keys []string, own bool) {
				if !own && received != nil {
					received <- keys
				}
			},
		})
		t.Cleanup(stop)
		if up := testenv.Recv(t, state, "the subscription"); !up {
			t.Fatal("the broadcaster did not subscribe")
		}
		return cache.NewHotListCache(testenv.NewRedisClient(t, nil), ks, hotTTLs, clock.Now, testenv.Logger(t), b)
	}
	receivedByB := make(chan []string, 4)
	a, b := instance(nil), instance(receivedByB)

	first := hotList("first", 3, clock.Now())
	if err := a.Save(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, receivedByB, "B to hear of the first list")
	if got, err := b.Load(t.Context()); err != nil || got.Entries[0].Article.Slug != "first-0" {
		t.Fatalf("B loads %+v, %v; want the first list", got.Entries, err)
	}
	second := hotList("second", 3, clock.Now())
	if err := a.Save(t.Context(), second); err != nil { // within B's local lifetime: the clock did not move
		t.Fatal(err)
	}
	testenv.Recv(t, receivedByB, "B to hear of the second list")
	if got, err := b.Load(t.Context()); err != nil || got.Entries[0].Article.Slug != "second-0" {
		t.Fatalf("B loads %+v, %v; want the second list at once", got.Entries, err)
	}
}
