package repository

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
)

// FollowRepository stores follow edges in PostgreSQL.
type FollowRepository struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewFollowRepository returns the repository.
func NewFollowRepository(pool *pgxpool.Pool, q dao.Querier) *FollowRepository {
	return &FollowRepository{pool: pool, q: q}
}

// Follow records that followerID follows followeeID; doing it twice changes nothing.
func (r *FollowRepository) Follow(ctx context.Context, followerID, followeeID int64) error {
	return wrapf(r.q.FollowInsert(ctx, r.pool, dao.FollowInsertParams{FollowerID: followerID, FolloweeID: followeeID}),
		"follow %d -> %d", followerID, followeeID)
}

// Unfollow removes the edge if it exists.
func (r *FollowRepository) Unfollow(ctx context.Context, followerID, followeeID int64) error {
	return wrapf(r.q.FollowDelete(ctx, r.pool, dao.FollowDeleteParams{FollowerID: followerID, FolloweeID: followeeID}),
		"unfollow %d -> %d", followerID, followeeID)
}

// IsFollowing reports whether followerID follows followeeID.
func (r *FollowRepository) IsFollowing(ctx context.Context, followerID, followeeID int64) (bool, error) {
	ok, err := r.q.FollowExists(ctx, r.pool, dao.FollowExistsParams{FollowerID: followerID, FolloweeID: followeeID})
	return ok, wrapf(err, "check follow %d -> %d", followerID, followeeID)
}

// FollowingAmong returns which of ids followerID follows, in one query.
func (r *FollowRepository) FollowingAmong(ctx context.Context, followerID int64, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	followed, err := r.q.FollowListFolloweesAmong(ctx, r.pool, dao.FollowListFolloweesAmongParams{FollowerID: followerID, FolloweeIds: ids})
	if err != nil {
		return nil, wrapf(err, "list follows of %d", followerID)
	}
	for _, id := range followed {
		out[id] = true
	}
	return out, nil
}
