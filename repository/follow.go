package repository

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// FollowRepository stores follow edges in PostgreSQL; who follows whom is read through the
// per-viewer state cache (viewerstate.go).
type FollowRepository struct {
	pool    *pgxpool.Pool
	q       dao.Querier
	viewers *cache.ViewerState
	lists   *cache.ListPageCache // the follower's feed stamp (cache.FeedStamps)
	log     *slog.Logger
}

// NewFollowRepository returns the repository.
func NewFollowRepository(pool *pgxpool.Pool, q dao.Querier, viewers *cache.ViewerState, lists *cache.ListPageCache, log *slog.Logger) *FollowRepository {
	return &FollowRepository{pool: pool, q: q, viewers: viewers, lists: lists, log: log}
}

// Follow records that followerID follows followeeID; doing it twice changes nothing.
func (r *FollowRepository) Follow(ctx context.Context, followerID, followeeID int64) error {
	err := r.q.FollowInsert(ctx, r.pool, dao.FollowInsertParams{FollowerID: followerID, FolloweeID: followeeID})
	r.followChanged(ctx, followerID, followeeID)
	return pg.Wrapf(err, "follow %d -> %d", followerID, followeeID)
}

// Unfollow removes the edge if it exists.
func (r *FollowRepository) Unfollow(ctx context.Context, followerID, followeeID int64) error {
	err := r.q.FollowDelete(ctx, r.pool, dao.FollowDeleteParams{FollowerID: followerID, FolloweeID: followeeID})
	r.followChanged(ctx, followerID, followeeID)
	return pg.Wrapf(err, "unfollow %d -> %d", followerID, followeeID)
}

// followChanged invalidates the cached edge after its statement, whatever it returned: an
// error may hide a commit (the connection broke while it ran), and a needless invalidation
// costs one reload.
func (r *FollowRepository) followChanged(ctx context.Context, followerID, followeeID int64) {
	r.viewers.Invalidate(ctx, followerID, cache.ViewerFollows, followeeID)
	if err := r.lists.FollowsChanged(context.WithoutCancel(ctx), followerID); err != nil {
		r.log.WarnContext(ctx, "feed follow list invalidation failed: the feed may miss the change for up to a minute", "follower_id", followerID, "err", err)
	}
}
