package repository

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"inkwell/cache"
	"inkwell/dao"
	"inkwell/domain"
)

// InteractiveRepository stores likes and counters: PostgreSQL is the truth (a like row per user
// and item, changed in one transaction with the item's counter row), Redis mirrors the counters.
type InteractiveRepository struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	counters *cache.CountersCache
	log      *slog.Logger
}

// NewInteractiveRepository returns the repository.
func NewInteractiveRepository(pool *pgxpool.Pool, q dao.Querier, counters *cache.CountersCache, log *slog.Logger) *InteractiveRepository {
	return &InteractiveRepository{pool: pool, q: q, counters: counters, log: log}
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
	var changed bool
	err := inTx(ctx, r.pool, func(q *dao.Queries) error {
		var n int64
		var err error
		if on {
			n, err = q.LikeOn(ctx, dao.LikeOnParams{UserID: userID, Biz: string(biz), BizID: id})
		} else {
			n, err = q.LikeOff(ctx, dao.LikeOffParams{UserID: userID, Biz: string(biz), BizID: id})
		}
		if err != nil || n == 0 {
			return wrapf(err, "set like of %s %d by %d", biz, id, userID)
		}
		changed = true
		delta := int64(1)
		if !on {
			delta = -1
		}
		return wrapf(q.InteractiveAddLikes(ctx, dao.InteractiveAddLikesParams{Biz: string(biz), BizID: id, Delta: delta}),
			"count like of %s %d", biz, id)
	})
	if err != nil || !changed {
		return err
	}
	delta := int64(1)
	if !on {
		delta = -1
	}
	if _, err := r.counters.Incr(context.WithoutCancel(ctx), biz, id, cache.FieldLikes, delta); err != nil {
		// The hash may now be off by one until it expires; PostgreSQL is right.
		r.log.WarnContext(ctx, "counter cache update failed", "biz", biz, "id", id, "err", err)
	}
	return nil
}

// Counters returns every item's counters: from Redis where cached, the rest with one query (and
// written back). Items never interacted with get zeros. When Redis fails, all come from PostgreSQL.
func (r *InteractiveRepository) Counters(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, error) {
	found, missing, err := r.counters.Get(ctx, biz, ids)
	redisDown := err != nil
	if redisDown {
		r.log.WarnContext(ctx, "counter cache read failed, serving from the database", "err", err)
		found, missing = make(map[int64]domain.Counters, len(ids)), ids
	}
	if len(missing) == 0 {
		return found, nil
	}
	rows, err := r.q.InteractiveGetMany(ctx, dao.InteractiveGetManyParams{Biz: string(biz), BizIds: missing})
	if err != nil {
		return nil, wrapf(err, "get counters of %d %s items", len(missing), biz)
	}
	loaded := make(map[int64]domain.Counters, len(missing))
	for _, id := range missing {
		loaded[id] = domain.Counters{}
	}
	for _, row := range rows {
		loaded[row.BizID] = domain.Counters{Reads: row.ReadCnt, Likes: row.LikeCnt, Collects: row.CollectCnt}
	}
	if !redisDown {
		if err := r.counters.Fill(context.WithoutCancel(ctx), biz, loaded); err != nil {
			r.log.WarnContext(ctx, "counter cache fill failed", "err", err)
		}
	}
	for id, c := range loaded {
		found[id] = c
	}
	return found, nil
}

// Liked returns which of ids userID currently likes, in one query.
func (r *InteractiveRepository) Liked(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 || userID == 0 {
		return out, nil
	}
	liked, err := r.q.LikeListLikedAmong(ctx, dao.LikeListLikedAmongParams{UserID: userID, Biz: string(biz), BizIds: ids})
	if err != nil {
		return nil, wrapf(err, "list likes of %d", userID)
	}
	for _, id := range liked {
		out[id] = true
	}
	return out, nil
}

// Collected returns which of ids are in any of userID's collections, in one query.
func (r *InteractiveRepository) Collected(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 || userID == 0 || biz != domain.BizArticle {
		return out, nil
	}
	found, err := r.q.CollectionItemCollectedAmong(ctx, dao.CollectionItemCollectedAmongParams{OwnerID: userID, ArticleIds: ids})
	if err != nil {
		return nil, wrapf(err, "list collected of %d", userID)
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
