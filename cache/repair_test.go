package cache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// titleTruth is the source of truth a test changes between reads.
type titleTruth struct {
	title atomic.Pointer[string]
	calls atomic.Int64
}

func newTitleTruth(title string) *titleTruth {
	l := &titleTruth{}
	l.title.Store(&title)
	return l
}

func (l *titleTruth) set(title string) { l.title.Store(&title) }

func (l *titleTruth) load(context.Context) (article, error) {
	l.calls.Add(1)
	return article{ID: 1, Title: *l.title.Load()}, nil
}

func titleVia(t *testing.T, c *cache.ReadThrough[article], key string, truth *titleTruth) string {
	t.Helper()
	a, err := c.Get(t.Context(), key, truth.load)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return a.Title
}

// Acceptance: an invalidation Redis did not take (the writing instance is cut from Redis, the
// others are not) is written again, in the background, as soon as Redis answers the writer, with
// no read or write of that instance needed. Before it lands, the other instances serve the old
// entry (they cannot know better); once it has, no instance does. The writer itself never serves
// it. Without the repair the old entry would be served until it expired (the policy's TTL).
func TestReadThrough_AFailedInvalidationIsRetriedUntilItLands(t *testing.T) {
	t.Parallel()
	rds := testenv.NewRedis(t)
	outage := &testenv.RedisOutage{}
	cutClient := testenv.NewRedisClient(t, nil)
	cutClient.AddHook(outage)
	rounds := make(chan int, 100)
	repairer, stop := cache.NewTunedRepairer(testenv.Logger(t), func(left int) { rounds <- left })
	t.Cleanup(stop)
	writerPolicy := testPolicy
	writerPolicy.Repair = repairer
	writer := cache.NewReadThrough[article](cutClient, "articles", writerPolicy, testenv.Logger(t))
	other := cache.NewReadThrough[article](testenv.NewRedisClient(t, nil), "articles", testPolicy, testenv.Logger(t))
	key := rds.Prefix + "article:1"
	truth := newTitleTruth("first")
	if got := titleVia(t, other, key, truth); got != "first" {
		t.Fatalf("first read: %q", got)
	}

	outage.On(true)
	truth.set("edited")
	if err := writer.Delete(t.Context(), key); !errors.Is(err, testenv.ErrRedisOutage) {
		t.Fatalf("Delete with Redis cut: %v, want the outage", err)
	}
	for testenv.Recv(t, rounds, "a failed repair round") == 0 {
	}
	if got := titleVia(t, other, key, truth); got != "first" {
		t.Fatalf("another instance before the repair: %q (the window this test does not close)", got)
	}
	if got := titleVia(t, writer, key, truth); got != "edited" {
		t.Fatalf("the writer while cut from Redis: %q, want the database's", got)
	}

	outage.On(false)
	// Wait for the repairer, not for a read of the writer: nothing else touches the writer's cache.
	for testenv.Recv(t, rounds, "the repair round once Redis answers") != 0 {
	}
	if got := titleVia(t, other, key, truth); got != "edited" {
		t.Fatalf("another instance after the repair: %q, want edited", got)
	}
	if got := titleVia(t, writer, key, truth); got != "edited" {
		t.Fatalf("the writer after the repair: %q, want edited", got)
	}
}

// Without a background repairer the writer's reads write the invalidation once Redis answers;
// the writer never serves the entry it knows is stale, nor fills over it, before that.
func TestReadThrough_TheWritersReadsRepairAndNeverServeTheStaleEntry(t *testing.T) {
	t.Parallel()
	rds := testenv.NewRedis(t)
	outage := &testenv.RedisOutage{}
	cutClient := testenv.NewRedisClient(t, nil)
	cutClient.AddHook(outage)
	writer := cache.NewReadThrough[article](cutClient, "articles", testPolicy, testenv.Logger(t))
	other := cache.NewReadThrough[article](testenv.NewRedisClient(t, nil), "articles", testPolicy, testenv.Logger(t))
	key := rds.Prefix + "article:1"
	truth := newTitleTruth("first")
	titleVia(t, writer, key, truth) // cached in Redis

	outage.On(true)
	truth.set("edited")
	if err := writer.Delete(t.Context(), key); err == nil {
		t.Fatal("Delete with Redis cut succeeded")
	}
	outage.On(false)
	// Reads right after a failed write leave the repair for a moment, but never serve the entry.
	testenv.WaitUntil(t, "the writer's reads write the invalidation", func() bool {
		if got := titleVia(t, writer, key, truth); got != "edited" {
			t.Fatalf("the writer read %q, want edited", got)
		}
		return titleVia(t, other, key, truth) == "edited"
	})
}

// An author's pages whose invalidation failed are invalidated again by the repairer; meanwhile
// the writer reads them as a miss and stores no fill over them.
func TestAuthorPageCache_AFailedInvalidationIsRetriedUntilItLands(t *testing.T) {
	t.Parallel()
	rds := testenv.NewRedis(t)
	outage := &testenv.RedisOutage{}
	cutClient := testenv.NewRedisClient(t, nil)
	cutClient.AddHook(outage)
	rounds := make(chan int, 100)
	repairer, stop := cache.NewTunedRepairer(testenv.Logger(t), func(left int) { rounds <- left })
	t.Cleanup(stop)
	policy := testPolicy
	policy.Repair = repairer
	writer := cache.NewAuthorPageCache(cutClient, cache.Keyspace(rds.Prefix), policy)
	other := cache.NewAuthorPageCache(testenv.NewRedisClient(t, nil), cache.Keyspace(rds.Prefix), testPolicy)
	old := []domain.Article{testArticle(1, domain.StatusPublished)}
	seen, err := other.Get(t.Context(), 42, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Fill(t.Context(), 42, "", seen, old, 1, false); err != nil {
		t.Fatal(err)
	}

	outage.On(true)
	if err := writer.Invalidate(t.Context(), 42); err == nil {
		t.Fatal("Invalidate with Redis cut succeeded")
	}
	for testenv.Recv(t, rounds, "a failed repair round") == 0 {
	}
	if p, _ := other.Get(t.Context(), 42, ""); !p.Found {
		t.Fatal("the old page was gone before the repair (this test would prove nothing)")
	}
	outage.On(false)
	if p, err := writer.Get(t.Context(), 42, ""); err != nil || p.Found {
		t.Fatalf("the writer read its stale page: %+v, %v", p, err)
	}
	for testenv.Recv(t, rounds, "the repair round once Redis answers") != 0 {
	}
	if p, err := other.Get(t.Context(), 42, ""); err != nil || p.Found {
		t.Fatalf("another instance after the repair: %+v, %v; want a miss", p, err)
	}
}

// A read that overlaps a repair (its invalidation taken, not yet written) cannot know whether its
// read reached Redis before the invalidation: it is a miss, whatever Redis holds. Until the
// repair settles; then the entry is what Redis has.
func TestRepair_AReadDuringARepairIsAMiss(t *testing.T) {
	t.Parallel()
	t.Run("author pages", func(t *testing.T) {
		t.Parallel()
		rds := testenv.NewRedis(t)
		pages := cache.NewAuthorPageCache(testenv.NewRedisClient(t, nil), cache.Keyspace(rds.Prefix), testPolicy)
		seen, err := pages.Get(t.Context(), 42, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pages.Fill(t.Context(), 42, "", seen, []domain.Article{testArticle(1, domain.StatusPublished)}, 1, false); err != nil {
			t.Fatal(err)
		}
		done := pages.RepairInFlight(pages.Key(42))
		if p, err := pages.Get(t.Context(), 42, ""); err != nil || p.Found {
			t.Fatalf("read during the repair: %+v, %v; want a miss", p, err)
		}
		done()
		if p, err := pages.Get(t.Context(), 42, ""); err != nil || !p.Found {
			t.Fatalf("read after the repair settled: %+v, %v; want the page", p, err)
		}
	})
	t.Run("read-through", func(t *testing.T) {
		t.Parallel()
		rds := testenv.NewRedis(t)
		c := cache.NewReadThrough[article](testenv.NewRedisClient(t, nil), "articles", testPolicy, testenv.Logger(t))
		key := rds.Prefix + "article:1"
		truth := newTitleTruth("first")
		titleVia(t, c, key, truth) // cached in Redis
		truth.set("second")        // only a miss reads it
		done := c.RepairInFlight(key)
		if got := titleVia(t, c, key, truth); got != "second" {
			t.Fatalf("read during the repair = %q, want the source's (a miss)", got)
		}
		done()
	})
}
