package repository_test

import (
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// TestCountersExactAfterLostIncrements: when the Redis increment that mirrors a committed collect
// or a batch of reads fails, the cached hash is behind PostgreSQL; the first counter read after
// Redis answers again must drop it and serve (and refill) the true count, not the stale one for
// the hash's TTL. Likes have the same guarantee (TestInteractiveRepository_RedisDown).
func TestCountersExactAfterLostIncrements(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	outage := &testenv.RedisOutage{}
	e := setup(t, db, envOpts{RedisHook: outage})
	cols := repository.NewCollectionRepository(e.pool, e.q, e.counters, e.viewers)
	reads := repository.NewReadRepository(e.pool, e.q, e.counters)
	ctx := t.Context()

	t.Run("collects", func(t *testing.T) {
		a := createArticle(t, e, articleOpts{})
		owner := createUser(t, e.users, userOpts{})
		col, err := cols.Create(ctx, domain.Collection{OwnerID: owner.ID, Name: "Later"}, folderCap)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.countersOf(t, a.ID)[a.ID].Collects; got != 0 { // fills the hash
			t.Fatalf("collects %d before, want 0", got)
		}
		outage.On(true)
		if added, err := cols.Add(ctx, col.ID, a.ID); err != nil || !added {
			t.Fatalf("Add during the outage: added=%v err=%v (PostgreSQL is up: it must succeed)", added, err)
		}
		outage.On(false)
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
		outage.On(true)
		evs := []domain.ReadEvent{
			{ID: testenv.RandomID(8), ArticleID: a.ID, At: time.Now()},
			{ID: testenv.RandomID(8), ArticleID: a.ID, At: time.Now()},
		}
		if n, err := reads.ApplyReads(ctx, "test-consumer", evs); err != nil || n != 2 {
			t.Fatalf("ApplyReads during the outage: %d, %v (PostgreSQL is up: it must count both)", n, err)
		}
		outage.On(false)
		if got := e.countersOf(t, a.ID)[a.ID].Reads; got != 2 {
			t.Fatalf("reads %d after Redis came back, want 2 (the hash missed the increment)", got)
		}
	})
}
