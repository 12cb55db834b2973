package repository

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// InteractiveRepository stores likes and counters: PostgreSQL is the truth (a like row per user
// and item, changed in one transaction with the item's counter row); the counters cache follows
// the committed changes and serves the reads.
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

func (r *InteractiveRepository) setLike(ctx context.Context, biz domain.Biz, id, userID int64, on bool) error {
	return inTx(ctx, r.pool, defaultRetry, func(tx *Tx) error {
		r.likeChanged(tx, biz, id, userID)
		var n int64
		var err error
		if on {
			n, err = queries.LikeOn(ctx, tx, dao.LikeOnParams{UserID: userID, Biz: string(biz), BizID: id})
		} else {
			n, err = queries.LikeOff(ctx, tx, dao.LikeOffParams{UserID: userID, Biz: string(biz), BizID: id})
		}
		if err != nil || n == 0 {
			return wrapf(err, "set like of %s %d by %d", biz, id, userID)
		}
		delta := int64(1)
		if !on {
			delta = -1
		}
		row, err := queries.InteractiveAddLikes(ctx, tx, dao.InteractiveAddLikesParams{Biz: string(biz), BizID: id, Delta: delta})
		if err != nil {
			return wrapf(err, "count like of %s %d", biz, id)
		}
		r.counters.Changed(tx, biz, map[int64]cache.CounterRow{id: counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)})
		return nil
	})
}

// Counters returns every item's counters through the counters cache; its misses are loaded with
// one query. Items never interacted with get zeros.
func (r *InteractiveRepository) Counters(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, error) {
	return r.counters.Read(ctx, biz, ids, func(ctx context.Context, ids []int64) (map[int64]cache.CounterRow, error) {
		rows, err := r.q.InteractiveGetMany(ctx, r.pool, dao.InteractiveGetManyParams{Biz: string(biz), BizIds: ids})
		if err != nil {
			return nil, wrapf(err, "get counters of %d %s items", len(ids), biz)
		}
		out := make(map[int64]cache.CounterRow, len(rows))
		for _, row := range rows {
			out[row.BizID] = counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)
		}
		return out, nil
	})
}

// counterRow is an interactives row as the counters cache keeps it.
func counterRow(reads, likes, collects, version int64) cache.CounterRow {
	return cache.CounterRow{Counters: domain.Counters{Reads: reads, Likes: likes, Collects: collects}, Version: version}
}
