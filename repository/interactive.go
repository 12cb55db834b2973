package repository

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// InteractiveRepository stores likes and counters: PostgreSQL is the truth (a like row per user
// and item, changed in one statement with one of the item's counter rows); the counters cache
// follows the committed changes and serves the reads.
type InteractiveRepository struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	counters *cache.Counters
	viewers  *cache.ViewerState // who likes what (viewerstate.go)
}

// NewInteractiveRepository returns the repository. The counters component is shared with the
// other repositories that change counts (collections, reads).
func NewInteractiveRepository(pool *pgxpool.Pool, q dao.Querier, counters *cache.Counters, viewers *cache.ViewerState) *InteractiveRepository {
	return &InteractiveRepository{pool: pool, q: q, counters: counters, viewers: viewers}
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

// LikeShards is how many counter rows (shards) an item's likes are spread over. A like changes one
// of them, chosen at random, so concurrent likes of one hot item rarely wait on each other's row
// lock, which is held until their commits have reached the disk. Reads sum the shards. Changing
// the number is safe: reads sum whatever rows exist.
const LikeShards = 64

// setLike changes the like row and, if that changed it, one counter shard, in one autocommitted
// statement (LikeOnCounted / LikeOffCounted: one round trip and one commit per like).
func (r *InteractiveRepository) setLike(ctx context.Context, biz domain.Biz, id, userID int64, on bool) error {
	var (
		shard int
		row   dao.LikeOnCountedRow
		err   error
	)
	// A deadlock or serialization failure rolled the whole statement back, so it is tried again
	// (a like holds its shard row when its trigger asks for the article's lock, which a delete of
	// the article may hold while it waits for that shard row).
	for attempt := 1; ; attempt++ {
		shard = rand.IntN(LikeShards)
		if on {
			row, err = r.q.LikeOnCounted(ctx, r.pool, dao.LikeOnCountedParams{UserID: userID, Biz: string(biz), BizID: id, Shard: int16(shard)})
		} else {
			var off dao.LikeOffCountedRow
			off, err = r.q.LikeOffCounted(ctx, r.pool, dao.LikeOffCountedParams{UserID: userID, Biz: string(biz), BizID: id, Shard: int16(shard)})
			row = dao.LikeOnCountedRow(off)
		}
		if !retryable(err) || attempt == defaultRetry.Attempts || ctx.Err() != nil {
			break
		}
	}
	// The viewer's cached flag goes whatever the answer: an error may hide a commit, and a
	// needless invalidation costs one reload.
	r.viewers.Invalidate(ctx, userID, cache.LikesOf(biz), id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // already so: nothing changed
	}
	if err != nil {
		// The statement may have committed before its answer was lost: the hash may miss it.
		r.counters.Suspect(ctx, biz, id)
		return wrapf(err, "set like of %s %d by %d", biz, id, userID)
	}
	// Committed.
	changed := counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)
	changed.Shard = shard
	r.counters.Stored(ctx, biz, map[int64]cache.CounterRow{id: changed})
	return nil
}

// Counters returns every item's counters (the sums over its shards) through the counters cache;
// its misses are loaded with one query. Items never interacted with get zeros.
func (r *InteractiveRepository) Counters(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, error) {
	return r.counters.Read(ctx, biz, ids, func(ctx context.Context, ids []int64) (map[int64][]cache.CounterRow, error) {
		rows, err := r.q.InteractiveGetMany(ctx, r.pool, dao.InteractiveGetManyParams{Biz: string(biz), BizIds: ids})
		if err != nil {
			return nil, wrapf(err, "get counters of %d %s items", len(ids), biz)
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
