package cache_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// These tests run against the real Redis (TEST_REDIS_URL); each test gets its own key prefix.

// testPolicy is long enough that nothing expires while a test runs.
var testPolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: 2 * time.Minute, LoadTimeout: 30 * time.Second}

// article is the value type the generic ReadThrough is exercised with.
type article struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
}

type env struct {
	rdb    redis.UniversalClient // raw client, to look at what the cache wrote
	ks     cache.Keyspace
	rt     *cache.ReadThrough[article]
	cmds   *commandCounter       // what the cache's own client sent
	client redis.UniversalClient // the cache's own client (dead with DeadRedis), for other caches under test
}

type envOpts struct {
	Policy    cache.Policy // zero: testPolicy
	DeadRedis bool         // point the cache at a port where nothing listens
}

func setup(t *testing.T, o envOpts) *env {
	t.Helper()
	if o.Policy == (cache.Policy{}) {
		o.Policy = testPolicy
	}
	r := testenv.NewRedis(t)
	// The cache gets a client of its own, so the commands it sends can be counted.
	rdb := testenv.NewRedis(t).Client
	if o.DeadRedis {
		rdb = testenv.DeadRedis(t)
	}
	cmds := &commandCounter{}
	rdb.AddHook(cmds)
	return &env{
		rdb:    r.Client,
		ks:     cache.Keyspace(r.Prefix),
		rt:     cache.NewReadThrough[article](rdb, "article", o.Policy, testenv.Logger(t)),
		cmds:   cmds,
		client: rdb,
	}
}

// pttl reads a key's remaining lifetime straight from Redis (-2: no key, -1: no expiry).
func (e *env) pttl(t *testing.T, key string) time.Duration {
	t.Helper()
	d, err := e.rdb.PTTL(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return d
}

func (e *env) exists(t *testing.T, key string) bool {
	t.Helper()
	n, err := e.rdb.Exists(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("EXISTS %s: %v", key, err)
	}
	return n == 1
}

// holdsEntry reports whether key holds a value or a null marker (a tombstone left by an
// invalidation holds neither: reads miss it).
func (e *env) holdsEntry(t *testing.T, key string) bool {
	t.Helper()
	raw, err := e.rdb.Get(context.Background(), key).Result()
	if errors.Is(err, redis.Nil) {
		return false
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return !strings.HasPrefix(raw, "\x01")
}

// loader is a fake loader that counts its calls and may be held at a gate.
type loader struct {
	val   article
	err   error
	gate  *testenv.Gate // nil: return at once
	calls atomic.Int64
	// ctxErr is the load context's error once the gate opened: nil proves the load was not
	// cancelled along with a caller.
	ctxErr atomic.Pointer[error]
}

func (l *loader) load(ctx context.Context) (article, error) {
	l.calls.Add(1)
	if l.gate != nil {
		if err := l.gate.Wait(ctx); err != nil {
			return article{}, err
		}
		err := ctx.Err()
		l.ctxErr.Store(&err)
	}
	return l.val, l.err
}

// commandCounter is a go-redis hook counting the commands a client sends (or tries to).
type commandCounter struct {
	mu    sync.Mutex
	names []string
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.mu.Lock()
		c.names = append(c.names, cmd.Name())
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (c *commandCounter) commands() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.names...)
}

// checkShortNullPTTL asserts that d, the PTTL of a null marker written at or after since, is within
// (0, NullTTL+NullTTL/4]. Only on a machine so stalled that the marker expired before it could be
// looked at does it settle for checking that the marker did not vanish early.
func checkShortNullPTTL(t *testing.T, d time.Duration, p cache.Policy, since time.Time) {
	t.Helper()
	maxTTL := p.NullTTL + p.NullTTL/4
	switch {
	case d == -1: // go-redis reports "no expiry" as -1 (and "no key" as -2), unscaled
		t.Fatal("null marker has no expiry")
	case d > maxTTL:
		t.Fatalf("null marker PTTL = %v, want at most %v", d, maxTTL)
	case d > 0:
	case time.Since(since) < p.NullTTL:
		t.Fatalf("null marker gone after %v, before its NullTTL of %v", time.Since(since), p.NullTTL)
	default:
		t.Logf("marker expired before its PTTL was read (%v later); bounds unchecked", time.Since(since))
	}
}
