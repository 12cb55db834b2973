package repository_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"inkwell/cache"
	"inkwell/domain"
	"inkwell/internal/testenv"
	"inkwell/repository"
)

// pauseBefore holds the first script run (alone or in a pipeline) whose arguments match, before
// it is sent, until released: the moment between a PostgreSQL step and its Redis step.
type pauseBefore struct {
	match   func(args []any) bool
	mu      sync.Mutex
	held    bool
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

func newPauseBefore(match func(args []any) bool) *pauseBefore {
	return &pauseBefore{match: match, arrived: make(chan struct{}), release: make(chan struct{})}
}

func (p *pauseBefore) hold(cmds ...redis.Cmder) {
	for _, c := range cmds {
		if n := c.Name(); (n == "evalsha" || n == "eval") && p.match(c.Args()) {
			p.mu.Lock()
			first := !p.held
			p.held = true
			p.mu.Unlock()
			if first {
				close(p.arrived)
				<-p.release
			}
			return
		}
	}
}

func (p *pauseBefore) let() { p.once.Do(func() { close(p.release) }) }

// arrivedCh yields once the held command has arrived.
func (p *pauseBefore) arrivedCh() <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() { <-p.arrived; ch <- struct{}{} }()
	return ch
}

func (p *pauseBefore) DialHook(next redis.DialHook) redis.DialHook { return next }

func (p *pauseBefore) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		p.hold(cmd)
		return next(ctx, cmd)
	}
}

func (p *pauseBefore) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.hold(cmds...)
		return next(ctx, cmds)
	}
}

func hasArg(args []any, want string) bool {
	return slices.ContainsFunc(args, func(a any) bool { s, ok := a.(string); return ok && s == want })
}

// A counter fill carries every field name; an increment names one.
func isFill(args []any) bool {
	return hasArg(args, cache.FieldReads) && hasArg(args, cache.FieldCollects)
}
func isLikeIncr(args []any) bool {
	return hasArg(args, cache.FieldLikes) && !hasArg(args, cache.FieldReads)
}

// TestCountersExactAcrossInstances: two instances share PostgreSQL and Redis and know nothing of
// each other's writes. A read on one that loads a count from PostgreSQL and fills the Redis hash
// must not leave the hash wrong when a like on the other races it — neither missing the like
// (loaded before it committed, filled after its increment found no hash) nor counting it twice
// (loaded after it committed, filled before its increment).
func TestCountersExactAcrossInstances(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	// instances returns a writer (the env's own repository, whose Redis client has writerHook) and
	// a reader: another repository on the same database and key prefix, whose client has readerHook.
	instances := func(t *testing.T, writerHook, readerHook redis.Hook) (*env, *repository.InteractiveRepository) {
		t.Helper()
		e := setup(t, db, envOpts{RedisHook: writerHook})
		client := testenv.NewRedisClient(t, nil)
		if readerHook != nil {
			client.AddHook(readerHook)
		}
		reader := repository.NewInteractiveRepository(e.pool, e.q, cache.NewCountersCache(client, e.ks, testPolicy),
			repository.NewCounterMirror(), testenv.Logger(t))
		return e, reader
	}
	read := func(t *testing.T, r *repository.InteractiveRepository, id int64) int64 {
		t.Helper()
		c, err := r.Counters(t.Context(), domain.BizArticle, []int64{id})
		if err != nil {
			t.Fatal(err)
		}
		return c[id].Likes
	}

	t.Run("a fill loaded before the like committed", func(t *testing.T) {
		t.Parallel()
		pause := newPauseBefore(isFill)
		t.Cleanup(pause.let)
		e, reader := instances(t, nil, pause)
		a := createArticle(t, e, articleOpts{})
		got := make(chan int64, 1)
		go func() { got <- read(t, reader, a.ID) }() // loads 0, then waits before filling
		recv(t, pause.arrivedCh(), "the reader to load the count")
		e.like(t, a.ID, createUser(t, e.users, userOpts{}).ID) // commits 1; no hash to increment
		pause.let()
		if n := recv(t, got, "the reader"); n != 0 {
			t.Fatalf("the reader served %d, want the 0 it loaded", n)
		}
		if n, ok := e.redisLikes(t, a.ID); ok && n != 1 {
			t.Fatalf("Redis like_cnt = %d: the reader's fill missed the like", n)
		}
		for _, r := range []*repository.InteractiveRepository{reader, e.inter} {
			if n := read(t, r, a.ID); n != 1 {
				t.Fatalf("likes = %d after the race, want 1", n)
			}
		}
		e.checkLikes(t, a.ID, 1)
	})

	t.Run("a fill loaded after the like committed, before its increment", func(t *testing.T) {
		t.Parallel()
		pause := newPauseBefore(isLikeIncr)
		t.Cleanup(pause.let)
		e, reader := instances(t, pause, nil)
		a := createArticle(t, e, articleOpts{})
		fan := createUser(t, e.users, userOpts{})
		liked := make(chan error, 1)
		go func() { liked <- e.inter.Like(context.Background(), domain.BizArticle, a.ID, fan.ID) }()
		recv(t, pause.arrivedCh(), "the like to commit and reach its increment")
		if n := read(t, reader, a.ID); n != 1 { // loads the committed 1 and tries to fill it
			t.Fatalf("the reader served %d, want the committed 1", n)
		}
		pause.let()
		if err := recv(t, liked, "the like"); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*repository.InteractiveRepository{reader, e.inter} {
			if n := read(t, r, a.ID); n != 1 {
				t.Fatalf("likes = %d after the race, want 1 (counted twice?)", n)
			}
		}
		e.checkLikes(t, a.ID, 1)
	})
}
