package repository

import (
	"context"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// The per-viewer flags of a rendered item — liked, collected, following — are read through
// cache.ViewerState, in batches (a page asks once per flag for all its items). Every write that
// changes one invalidates it after its commit, before it answers (Changed, or Invalidate for
// the writes outside a unit of work), so the viewer reads their own writes on every instance.

// Liked returns which of ids userID currently likes.
func (r *InteractiveRepository) Liked(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error) {
	if len(ids) == 0 || userID == 0 {
		return map[int64]bool{}, nil
	}
	return r.viewers.Among(ctx, userID, cache.LikesOf(biz), ids, func(ctx context.Context, ids []int64) (map[int64]bool, error) {
		liked, err := r.q.LikeListLikedAmong(ctx, r.pool, dao.LikeListLikedAmongParams{UserID: userID, Biz: string(biz), BizIds: ids})
		if err != nil {
			return nil, pg.Wrapf(err, "list likes of %d", userID)
		}
		return setOf(liked), nil
	})
}

// Collected returns which of ids are in any of userID's collections.
func (r *InteractiveRepository) Collected(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error) {
	if len(ids) == 0 || userID == 0 || biz != domain.BizArticle {
		return map[int64]bool{}, nil
	}
	return r.viewers.Among(ctx, userID, cache.ViewerCollects, ids, func(ctx context.Context, ids []int64) (map[int64]bool, error) {
		found, err := r.q.CollectionItemCollectedAmong(ctx, r.pool, dao.CollectionItemCollectedAmongParams{OwnerID: userID, ArticleIds: ids})
		if err != nil {
			return nil, pg.Wrapf(err, "list collected of %d", userID)
		}
		return setOf(found), nil
	})
}

// FollowingAmong returns which of ids followerID follows.
func (r *FollowRepository) FollowingAmong(ctx context.Context, followerID int64, ids []int64) (map[int64]bool, error) {
	if len(ids) == 0 {
		return map[int64]bool{}, nil
	}
	return r.viewers.Among(ctx, followerID, cache.ViewerFollows, ids, func(ctx context.Context, ids []int64) (map[int64]bool, error) {
		followed, err := r.q.FollowListFolloweesAmong(ctx, r.pool, dao.FollowListFolloweesAmongParams{FollowerID: followerID, FolloweeIds: ids})
		if err != nil {
			return nil, pg.Wrapf(err, "list follows of %d", followerID)
		}
		return setOf(followed), nil
	})
}

// IsFollowing reports whether followerID follows followeeID.
func (r *FollowRepository) IsFollowing(ctx context.Context, followerID, followeeID int64) (bool, error) {
	got, err := r.FollowingAmong(ctx, followerID, []int64{followeeID})
	return got[followeeID], err
}

func setOf(ids []int64) map[int64]bool {
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}
