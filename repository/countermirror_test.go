package repository_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// redisOutage fails every command while it is on, as a Redis that stopped answering would.
type redisOutage struct{ on atomic.Bool }

var errOutage = errors.New("injected: redis does not answer")

func (o *redisOutage) DialHook(next redis.DialHook) redis.DialHook { return next }

func (o *redisOutage) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if o.on.Load() {
			cmd.SetErr(errOutage)
			return errOutage
		}
		return next(ctx, cmd)
	}
}

func (o *redisOutage) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if o.on.Load() {
			for _, c := range cmds {
				c.SetErr(errOutage)
			}
			return errOutage
		}
		return next(ctx, cmds)
	}
}

// TestCountersExactAfterLostIncrements: when the Redis increment that mirrors a committed collect
// or a batch of reads fails, the cached hash is behind PostgreSQL; the first counter read after
// Redis answers again must drop it and serve (and refill) the true count, not the stale one for
// the hash's TTL. Likes have the same guarantee (TestInteractiveRepository_RedisDown).
func TestCountersExactAfterLostIncrements(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	outage := &redisOutage{}
	e := setup(t, db, envOpts{RedisHook: outage})
	cols := repository.NewCollectionRepository(e.pool, e.q, e.counters)
	reads := repository.NewReadRepository(e.pool, e.q, e.counters)
	ctx := t.Context()

	t.Run("collects", func(t *testing.T) {
		a := createArticle(t, e, articleOpts{})
		owner := createUser(t, e.users, userOpts{})
		col, err := cols.Create(ctx, domain.Collection{OwnerID: owner.ID, Name: "Later"})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.countersOf(t, a.ID)[a.ID].Collects; got != 0 { // fills the hash
			t.Fatalf("collects %d before, want 0", got)
		}
		outage.on.Store(true)
		if added, err := cols.Add(ctx, col.ID, a.ID); err != nil || !added {
			t.Fatalf("Add during the outage: added=%v err=%v (PostgreSQL is up: it must succeed)", added, err)
		}
		outage.on.Store(false)
		if got := e.countersOf(t, a.ID)[a.ID].Collects; got != 1 {
			t.Fatalf("collects %d after Redis came back, want 1 (the hash missed the increment)", got)
		}
		if got := e.countersOf(t, a.ID)[a.ID].Collects; got != 1 {
			t.Fatalf("collects %d on the next read, want 1 (refilled)", got)
		}
	})

	t.Run("reads", func(t *testing.T) {
		a := createArticle(t, e, articleOpts{})
		if got := e.countersOf(t, a.ID)[a.ID].Reads; got != 0 {
			t.Fatalf("reads %d before, want 0", got)
		}
		outage.on.Store(true)
		evs := []domain.ReadEvent{
			{ID: testenv.RandomID(8), ArticleID: a.ID, At: time.Now()},
			{ID: testenv.RandomID(8), ArticleID: a.ID, At: time.Now()},
		}
		if n, err := reads.ApplyReads(ctx, "test-consumer", evs); err != nil || n != 2 {
			t.Fatalf("ApplyReads during the outage: %d, %v (PostgreSQL is up: it must count both)", n, err)
		}
		outage.on.Store(false)
		if got := e.countersOf(t, a.ID)[a.ID].Reads; got != 2 {
			t.Fatalf("reads %d after Redis came back, want 2 (the hash missed the increment)", got)
		}
	})
}
