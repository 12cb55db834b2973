package moderation_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/moderation"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// These tests run against the real PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL), each
// top-level test on a database and key prefix of its own.

var testPolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: 2 * time.Minute, LoadTimeout: 30 * time.Second}

type blockEnv struct {
	pool    *pgxpool.Pool
	blocks  *moderation.Blocks
	follows *repository.FollowRepository
	uow     *pg.UnitOfWork
}

func setupBlocks(t *testing.T) *blockEnv {
	t.Helper()
	db := testenv.NewDB(t)
	r := testenv.NewRedis(t)
	log := testenv.Logger(t)
	ks := cache.Keyspace(r.Prefix)
	q := repository.NewQuerier()
	return &blockEnv{
		pool:    db.Pool,
		blocks:  moderation.NewBlocks(db.Pool, q, cache.NewBlocks(r.Client, ks, testPolicy, log), log),
		follows: repository.NewFollowRepository(db.Pool, q, cache.NewViewerState(r.Client, ks, testPolicy, log), cache.NewListPageCache(r.Client, ks, testPolicy, log), log),
		uow:     pg.NewUnitOfWork(db.Pool),
	}
}

func (e *blockEnv) user(t *testing.T, name string) int64 {
	t.Helper()
	var id int64
	err := e.pool.QueryRow(t.Context(), `INSERT INTO users (email, username, password_hash) VALUES ($1 || '@example.com', $1, 'x') RETURNING id`, name).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// block is the block use case's unit of work.
func (e *blockEnv) block(t *testing.T, blocker, blocked int64) bool {
	t.Helper()
	var fresh bool
	err := e.uow.InTx(t.Context(), func(tx service.Tx) error {
		if err := e.blocks.LockPairIn(t.Context(), tx, blocker, blocked); err != nil {
			return err
		}
		var err error
		if fresh, err = e.blocks.BlockIn(t.Context(), tx, blocker, blocked); err != nil {
			return err
		}
		if err := e.follows.UnfollowIn(t.Context(), tx, blocker, blocked); err != nil {
			return err
		}
		return e.follows.UnfollowIn(t.Context(), tx, blocked, blocker)
	})
	if err != nil {
		t.Fatal(err)
	}
	return fresh
}

func (e *blockEnv) blockedBy(t *testing.T, blocker int64) []int64 {
	t.Helper()
	ids, err := e.blocks.BlockedBy(t.Context(), blocker)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestBlocks_BlockEndsFollowsAndTheCachedSetFollowsEveryChange(t *testing.T) {
	t.Parallel()
	e := setupBlocks(t)
	ctx := t.Context()
	ann, bob, cat := e.user(t, "ann"), e.user(t, "bob"), e.user(t, "cat")
	for _, f := range [][2]int64{{ann, bob}, {bob, ann}, {ann, cat}} {
		if err := e.follows.Follow(ctx, f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	// Warm the cached set (empty) and the follow flags the block must drop.
	if got := e.blockedBy(t, ann); len(got) != 0 {
		t.Fatalf("blocked set before any block = %v", got)
	}
	if f, _ := e.follows.FollowingAmong(ctx, bob, []int64{ann}); !f[ann] {
		t.Fatal("bob should follow ann before the block")
	}

	if !e.block(t, ann, bob) {
		t.Error("the first block reported as not new")
	}
	if e.block(t, ann, bob) {
		t.Error("blocking twice reported a new block")
	}
	if got := e.blockedBy(t, ann); !reflect.DeepEqual(got, []int64{bob}) {
		t.Errorf("blocked set after the block = %v, want [%d] (the cached empty set must be dropped)", got, bob)
	}
	for _, pair := range [][2]int64{{ann, bob}, {bob, ann}} {
		f, err := e.follows.FollowingAmong(ctx, pair[0], []int64{pair[1]})
		if err != nil || f[pair[1]] {
			t.Errorf("%d still follows %d after the block (%v)", pair[0], pair[1], err)
		}
	}
	if f, _ := e.follows.FollowingAmong(ctx, ann, []int64{cat}); !f[cat] {
		t.Error("the block ended a follow of someone else")
	}
	err := e.uow.InTx(ctx, func(tx service.Tx) error {
		aBlocksB, bBlocksA, err := e.blocks.BetweenIn(ctx, tx, bob, ann)
		if err == nil && (aBlocksB || !bBlocksA) {
			t.Errorf("between bob and ann = (%v, %v), want (false, true)", aBlocksB, bBlocksA)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	if gone, err := e.blocks.Unblock(ctx, ann, bob); err != nil || !gone {
		t.Fatalf("Unblock = (%v, %v), want (true, nil)", gone, err)
	}
	if gone, err := e.blocks.Unblock(ctx, ann, bob); err != nil || gone {
		t.Fatalf("second Unblock = (%v, %v), want (false, nil)", gone, err)
	}
	if got := e.blockedBy(t, ann); len(got) != 0 {
		t.Errorf("blocked set after the unblock = %v, want none", got)
	}
}

func TestBlocks_BlockingYourselfOrNobodyIsRefusedByTheSchema(t *testing.T) {
	t.Parallel()
	e := setupBlocks(t)
	ann := e.user(t, "ann")
	for _, other := range []int64{ann, 999_999} {
		err := e.uow.InTx(t.Context(), func(tx service.Tx) error {
			_, err := e.blocks.BlockIn(t.Context(), tx, ann, other)
			return err
		})
		if err == nil {
			t.Errorf("block of %d stored; the schema must refuse it", other)
		}
	}
}

func TestBlocks_ListPagesNewestFirst(t *testing.T) {
	t.Parallel()
	e := setupBlocks(t)
	ctx := t.Context()
	ann := e.user(t, "ann")
	var want []int64
	for _, name := range []string{"b1", "b2", "b3", "b4", "b5"} {
		id := e.user(t, name)
		e.block(t, ann, id)
		want = append([]int64{id}, want...)
	}
	// Two blocks at the very same time: the order is the id's, and the cursor steps over them.
	if _, err := e.pool.Exec(ctx, `UPDATE user_blocks SET created_at = '2026-01-01T00:00:00Z' WHERE blocker_id = $1 AND blocked_id = ANY ($2)`, ann, want[3:]); err != nil {
		t.Fatal(err)
	}
	want = append(want[:3], min(want[3], want[4]), max(want[3], want[4]))
	var got []int64
	var cursor *domain.Cursor
	for range 10 {
		page, err := e.blocks.List(ctx, ann, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page {
			got = append(got, b.UserID)
			if b.Username == "" || b.BlockedAt.IsZero() {
				t.Errorf("entry %+v lacks its name or time", b)
			}
		}
		if len(page) < 2 {
			break
		}
		last := page[len(page)-1]
		cursor = &domain.Cursor{CreatedAt: last.BlockedAt, ID: last.UserID}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blocks = %v, want %v", got, want)
	}
}

// A follow runs under the pair's lock and checks for a block in its unit of work: one that waits
// for a block's lock sees the block once it has the lock, so no follow outlives a block.
func TestBlocks_AFollowWaitingOnABlockSeesIt(t *testing.T) {
	t.Parallel()
	e := setupBlocks(t)
	ctx := t.Context()
	ann, bob := e.user(t, "ann"), e.user(t, "bob")
	locked, release := make(chan struct{}), make(chan struct{})
	blockDone := make(chan error, 1)
	go func() {
		blockDone <- e.uow.InTx(context.Background(), func(tx service.Tx) error {
			if err := e.blocks.LockPairIn(ctx, tx, ann, bob); err != nil {
				return err
			}
			if _, err := e.blocks.BlockIn(ctx, tx, ann, bob); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	testenv.Recv(t, locked, "the block holds the pair's lock")
	followDone := make(chan error, 1)
	var blocked bool
	go func() {
		followDone <- e.uow.InTx(context.Background(), func(tx service.Tx) error {
			if err := e.blocks.LockPairIn(ctx, tx, bob, ann); err != nil {
				return err
			}
			_, b, err := e.blocks.BetweenIn(ctx, tx, bob, ann)
			if err != nil || b {
				blocked = b
				return err
			}
			return e.follows.FollowIn(ctx, tx, bob, ann)
		})
	}()
	testenv.WaitUntil(t, "the follow waits for the pair's lock", func() bool {
		var waiting bool
		_ = e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`).Scan(&waiting)
		return waiting
	})
	close(release)
	if err := testenv.Recv(t, blockDone, "the block commits"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, followDone, "the follow ends"); err != nil {
		t.Fatal(err)
	}
	if !blocked {
		t.Error("the follow did not see the block it waited for")
	}
	var follows int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM follows WHERE follower_id = $1 AND followee_id = $2`, bob, ann).Scan(&follows); err != nil || follows != 0 {
		t.Errorf("follows of a blocker = %d (%v), want 0", follows, err)
	}
}
