package cache_test

import (
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Write marks are shared through Redis (another instance's WriteMarks sees them), never move
// back when two writes are recorded out of order, expire after their time to live, and say so
// when Redis cannot answer (the reads then go to the primary) while the instance's own marks
// still hold.
func TestWriteMarks(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a := cache.NewWriteMarks(r.Client, ks, 2*time.Second, clock)
	b := cache.NewWriteMarks(r.Client, ks, 2*time.Second, clock)
	ctx := t.Context()

	if pos, err := b.Position(ctx, 1); err != nil || pos != 0 {
		t.Fatalf("no mark yet: %d, %v", pos, err)
	}
	if err := a.Mark(ctx, 1, 500); err != nil {
		t.Fatal(err)
	}
	if err := b.Mark(ctx, 1, 300); err != nil { // an older write recorded later, elsewhere
		t.Fatal(err)
	}
	for name, m := range map[string]*cache.WriteMarks{"the writer's instance": a, "another instance": b} {
		if pos, err := m.Position(ctx, 1); err != nil || pos != 500 {
			t.Fatalf("%s: mark %d, %v; want 500 (never moved back)", name, pos, err)
		}
	}
	if ttl := r.Client.PTTL(ctx, ks.Key("wrote", "1")).Val(); ttl <= 0 || ttl > 2*time.Second {
		t.Fatalf("the mark lives %s in Redis, want at most its 2s", ttl)
	}

	dead := cache.NewWriteMarks(testenv.DeadRedis(t), ks, 2*time.Second, clock)
	if err := dead.Mark(ctx, 2, 700); err == nil {
		t.Fatal("a mark Redis did not take reported no error")
	}
	if _, err := dead.Position(ctx, 2); err == nil {
		t.Fatal("a position Redis could not give reported no error")
	}

	mu.Lock()
	now = now.Add(3 * time.Second)
	mu.Unlock()
	if err := r.Client.Del(ctx, ks.Key("wrote", "1")).Err(); err != nil { // Redis expired it
		t.Fatal(err)
	}
	if pos, err := a.Position(ctx, 1); err != nil || pos != 0 {
		t.Fatalf("after its time to live the in-process mark still says %d (%v)", pos, err)
	}
}
