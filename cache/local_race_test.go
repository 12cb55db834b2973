package cache_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// pauseAfterReply holds the first command (or pipeline) that match accepts right after Redis has
// answered it, until the test releases it: the moment a reader has fetched a value and not yet
// kept it in process.
type pauseAfterReply struct {
	match    func(name string) bool
	mu       sync.Mutex
	held     bool
	fetched  chan struct{}
	proceed  chan struct{}
	released sync.Once
}

func newPause(match func(name string) bool) *pauseAfterReply {
	return &pauseAfterReply{match: match, fetched: make(chan struct{}), proceed: make(chan struct{})}
}

func (p *pauseAfterReply) hold(name string) {
	if !p.match(name) {
		return
	}
	p.mu.Lock()
	first := !p.held
	p.held = true
	p.mu.Unlock()
	if first {
		close(p.fetched)
		<-p.proceed
	}
}

func (p *pauseAfterReply) release() { p.released.Do(func() { close(p.proceed) }) }

func (p *pauseAfterReply) DialHook(next redis.DialHook) redis.DialHook { return next }

func (p *pauseAfterReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		p.hold(cmd.Name())
		return err
	}
}

func (p *pauseAfterReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		p.hold(cmds[0].Name())
		return err
	}
}

// TestLocalTierKeepsNoValueOlderThanItsOwnWrite: a read that fetched a value from Redis just
// before this process changed it must not keep that value in process afterwards — or this
// process would serve its own write's predecessor for the local TTL.
func TestLocalTierKeepsNoValueOlderThanItsOwnWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("read_through", func(t *testing.T) {
		t.Parallel()
		rds := testenv.NewRedis(t)
		client := testenv.NewRedisClient(t, nil)
		pause := newPause(func(name string) bool { return name == "get" })
		client.AddHook(pause)
		t.Cleanup(pause.release)
		rt := cache.NewReadThrough[string](client, "race", cache.Policy{TTL: time.Minute, NullTTL: time.Second, LocalTTL: time.Minute}, testenv.Logger(t))
		key := rds.Prefix + "k"
		if err := rds.Client.Set(ctx, key, `"old"`, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		load := func(context.Context) (string, error) { return "from postgres", nil }

		read := make(chan string, 1)
		go func() {
			v, _ := rt.Get(ctx, key, load)
			read <- v
		}()
		testenv.Recv(t, pause.fetched, "the reader to fetch the old value")
		if err := rt.Delete(ctx, key); err != nil { // this process's write invalidates the key
			t.Fatal(err)
		}
		pause.release()
		if v := testenv.Recv(t, read, "the reader"); v != "old" {
			t.Fatalf("the paused reader got %q, want the old value it fetched", v)
		}
		if v, err := rt.Get(ctx, key, load); err != nil || v != "from postgres" {
			t.Fatalf("after this process invalidated the key, it reads %q (%v), want %q: the racing reader's older value was kept", v, err, "from postgres")
		}
	})

	t.Run("counters", func(t *testing.T) {
		t.Parallel()
		rds := testenv.NewRedis(t)
		client := testenv.NewRedisClient(t, nil)
		pause := newPause(func(name string) bool { return name == "hmget" })
		client.AddHook(pause)
		t.Cleanup(pause.release)
		c := cache.NewCounters(client, cache.Keyspace(rds.Prefix), cache.Policy{TTL: time.Minute, LocalTTL: time.Minute}, testenv.Logger(t))
		noLoad := func(context.Context, []int64) (map[int64][]cache.CounterRow, error) {
			return nil, errors.New("a cached item was loaded")
		}
		if err := c.Fill(ctx, domain.BizArticle, map[int64]domain.Counters{7: {Likes: 1}}); err != nil {
			t.Fatal(err)
		}
		read := make(chan int64, 1)
		go func() {
			got, _ := c.Read(ctx, domain.BizArticle, []int64{7}, noLoad)
			read <- got[7].Likes
		}()
		testenv.Recv(t, pause.fetched, "the reader to fetch likes=1")
		change(c, newTruth(map[int64]domain.Counters{7: {Likes: 1}}), 7, cache.FieldLikes, 1) // this process's like
		pause.release()
		if n := testenv.Recv(t, read, "the reader"); n != 1 {
			t.Fatalf("the paused reader got likes=%d, want the 1 it fetched", n)
		}
		if got, err := c.Read(ctx, domain.BizArticle, []int64{7}, noLoad); err != nil || got[7].Likes != 2 {
			t.Fatalf("after this process's like, likes=%d (%v), want 2: the racing reader's older count was kept", got[7].Likes, err)
		}
	})
}
