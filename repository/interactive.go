package repository

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// InteractiveRepository stores likes and counters: PostgreSQL is the truth (a like row per user
// and item, changed in one statement with one of the item's counter rows); the counters cache
// follows the committed changes and serves the reads.
type InteractiveRepository struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	counters *cache.Counters
	viewers  *cache.ViewerState // who likes what (viewerstate.go)
	likes    *keyedBatcher[likeItem, likeChange, struct{}]
}

// NewInteractiveRepository returns the repository. The counters component is shared with the
// other repositories that change counts (collections, reads).
func NewInteractiveRepository(pool *pgxpool.Pool, q dao.Querier, counters *cache.Counters, viewers *cache.ViewerState) *InteractiveRepository {
	r := &InteractiveRepository{pool: pool, q: q, counters: counters, viewers: viewers}
	r.likes = newLikeBatcher(r)
	return r
}

// Like turns userID's like of the item on. Only a real change (off or absent → on) moves the
// counter, so concurrent or repeated likes by one user count once.
func (r *InteractiveRepository) Like(ctx context.Context, biz domain.Biz, id, userID int64) error {
	return r.setLike(ctx, biz, id, userID, true)
}

// Unlike turns userID's like off; unliking what is not liked changes nothing.
func (r *InteractiveRepository) Unlike(ctx context.Context, biz domain.Biz, id, userID int64) error {
	return r.setLike(ctx, biz, id, userID, false)
}

// LikeShards is how many counter rows (shards) an item's likes are spread over. A batch of likes
// changes one of them, chosen at random, so the batches of several instances on one hot item
// rarely wait on each other's row lock, which is held until their commits have reached the disk.
// Reads sum the shards. Changing the number is safe: reads sum whatever rows exist.
const LikeShards = 64

// likeItem is what a batch of likes is per: one item.
type likeItem struct {
	biz domain.Biz
	id  int64
}

// likeChange is one request of a batch: userID's like turned on or off.
type likeChange struct {
	userID int64
	on     bool
}

// maxLikeBatch bounds one statement's arrays; likeBatchTimeout bounds its run, detached from
// the callers (see keyedBatcher).
const (
	maxLikeBatch     = 512
	likeBatchTimeout = 10 * time.Second
)

func newLikeBatcher(r *InteractiveRepository) *keyedBatcher[likeItem, likeChange, struct{}] {
	return newKeyedBatcher(maxLikeBatch, likeBatchTimeout, r.applyLikes)
}

// setLike changes userID's like of the item together with the other likes and unlikes of that
// item arriving meanwhile: one statement, one commit, one counter shard, one cache update and one
// invalidation broadcast per batch (keyedBatcher, applyLikes).
func (r *InteractiveRepository) setLike(ctx context.Context, biz domain.Biz, id, userID int64, on bool) error {
	_, err := r.likes.add(ctx, likeItem{biz, id}, likeChange{userID, on})
	return err
}

// applyLikes stores one batch. A user with two requests in it (they raced each other) has them
// applied one after the other, in arrival order: each statement holds a user once. When a
// statement of several fails, its likes are tried one by one, so one that cannot be stored (its
// user was deleted meanwhile) fails only itself.
func (r *InteractiveRepository) applyLikes(ctx context.Context, item likeItem, changes []likeChange) ([]struct{}, []error) {
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(changes))
		}
		errs[i] = err
	}
	for rest := indexes(len(changes)); len(rest) > 0; {
		var round, later []int
		inRound := make(map[int64]bool, len(rest))
		for _, i := range rest {
			if inRound[changes[i].userID] {
				later = append(later, i)
				continue
			}
			inRound[changes[i].userID] = true
			round = append(round, i)
		}
		if err := r.likeRound(ctx, item, changes, round); err != nil {
			if len(round) == 1 {
				fail(round[0], err)
			} else {
				for _, i := range round {
					if err := r.likeRound(ctx, item, changes, []int{i}); err != nil {
						fail(i, err)
					}
				}
			}
		}
		rest = later
	}
	return nil, errs
}

// likeRound applies the changes at idx (distinct users) in one autocommitted statement
// (LikeSetManyCounted).
func (r *InteractiveRepository) likeRound(ctx context.Context, item likeItem, changes []likeChange, idx []int) error {
	var on, off, users []int64
	for _, i := range idx {
		c := changes[i]
		users = append(users, c.userID)
		if c.on {
			on = append(on, c.userID)
		} else {
			off = append(off, c.userID)
		}
	}
	var (
		shard int
		row   dao.LikeSetManyCountedRow
		err   error
	)
	// A deadlock or serialization failure rolled the whole statement back, so it is tried again
	// (a like holds its shard row when its trigger asks for the article's lock, which a delete of
	// the article may hold while it waits for that shard row).
	for attempt := 1; ; attempt++ {
		shard = rand.IntN(LikeShards)
		row, err = r.q.LikeSetManyCounted(ctx, r.pool, dao.LikeSetManyCountedParams{
			Biz: string(item.biz), BizID: item.id, OnUsers: nonNil(on), OffUsers: nonNil(off), Shard: int16(shard),
		})
		if !pg.Retryable(err) || pg.DefaultRetry.Exhausted(attempt) || ctx.Err() != nil {
			break
		}
	}
	// The viewers' cached flags go whatever the answer: an error may hide a commit, and a
	// needless invalidation costs one reload.
	r.viewers.InvalidateViewers(ctx, users, cache.LikesOf(item.biz), item.id)
	if err != nil {
		// The statement may have committed before its answer was lost: the hash may miss it.
		r.counters.Suspect(ctx, item.biz, item.id)
		return pg.Wrapf(err, "set %d likes of %s %d", len(idx), item.biz, item.id)
	}
	if row.ShardTouched { // committed, and the count moved
		changed := counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)
		changed.Shard = shard
		r.counters.Stored(ctx, item.biz, map[int64]cache.CounterRow{item.id: changed})
	}
	return nil
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// nonNil makes an empty array a PostgreSQL '{}' rather than NULL.
func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// Counters returns every item's counters (the sums over its shards) through the counters cache;
// its misses are loaded with one query. Items never interacted with get zeros.
func (r *InteractiveRepository) Counters(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, error) {
	return r.counters.Read(ctx, biz, ids, func(ctx context.Context, ids []int64) (map[int64][]cache.CounterRow, error) {
		rows, err := r.q.InteractiveGetMany(ctx, r.pool, dao.InteractiveGetManyParams{Biz: string(biz), BizIds: ids})
		if err != nil {
			return nil, pg.Wrapf(err, "get counters of %d %s items", len(ids), biz)
		}
		out := make(map[int64][]cache.CounterRow, len(ids))
		for _, row := range rows {
			shard := counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)
			shard.Shard = int(row.Shard)
			out[row.BizID] = append(out[row.BizID], shard)
		}
		return out, nil
	})
}

// counterRow is an interactives row as the counters cache keeps it (shard 0, where read counts
// and collects go, unless the caller says otherwise).
func counterRow(reads, likes, collects, version int64) cache.CounterRow {
	return cache.CounterRow{Counters: domain.Counters{Reads: reads, Likes: likes, Collects: collects}, Version: version}
}
