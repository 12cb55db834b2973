package repository

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
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

// FollowIn is Follow in the caller's unit of work (a follow checked against blocks under their
// lock). The cached edge and the follower's feed list are dropped after the commit, or when its
// outcome is unknown.
func (r *FollowRepository) FollowIn(ctx context.Context, stx service.Tx, followerID, followeeID int64) error {
	tx := pg.TxOf(stx)
	err := r.q.FollowInsert(ctx, tx, dao.FollowInsertParams{FollowerID: followerID, FolloweeID: followeeID})
	r.changedAfter(tx, followerID, followeeID)
	return pg.Wrapf(err, "follow %d -> %d", followerID, followeeID)
}

// UnfollowIn is Unfollow in the caller's unit of work (a block ends the follows between two
// users), with Follow's cache drops after the commit.
func (r *FollowRepository) UnfollowIn(ctx context.Context, stx service.Tx, followerID, followeeID int64) error {
	tx := pg.TxOf(stx)
	err := r.q.FollowDelete(ctx, tx, dao.FollowDeleteParams{FollowerID: followerID, FolloweeID: followeeID})
	r.changedAfter(tx, followerID, followeeID)
	return pg.Wrapf(err, "unfollow %d -> %d", followerID, followeeID)
}

func (r *FollowRepository) changedAfter(tx *pg.Tx, followerID, followeeID int64) {
	drop := func(ctx context.Context) { r.followChanged(ctx, followerID, followeeID) }
	tx.AfterCommit(drop)
	tx.IfCommitUnknown(drop)
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
