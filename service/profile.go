package service

import (
	"context"
	"errors"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=profile.go -destination=mocks/profile_mock.go -package=mocks

// FollowRepository stores who follows whom. Follow and Unfollow are idempotent. Shared: the
// article, comment and rank use cases read follow flags through it too.
type FollowRepository interface {
	Follow(ctx context.Context, followerID, followeeID int64) error
	Unfollow(ctx context.Context, followerID, followeeID int64) error
	// FollowIn is Follow in the caller's unit of work.
	FollowIn(ctx context.Context, tx Tx, followerID, followeeID int64) error
	IsFollowing(ctx context.Context, followerID, followeeID int64) (bool, error)
	// FollowingAmong returns which of ids followerID follows, in one query.
	FollowingAmong(ctx context.Context, followerID int64, ids []int64) (map[int64]bool, error)
}

// ProfileService shows public profiles and manages follows.
type ProfileService struct {
	users   UserRepository
	follows FollowRepository
	blocks  BlockRepository
	uow     UnitOfWork
}

// NewProfileService returns a ProfileService over its ports.
func NewProfileService(users UserRepository, follows FollowRepository, blocks BlockRepository, uow UnitOfWork) *ProfileService {
	return &ProfileService{users: users, follows: follows, blocks: blocks, uow: uow}
}

// Get returns username's profile as seen by viewerID (0 for an anonymous viewer).
func (s *ProfileService) Get(ctx context.Context, viewerID int64, username string) (domain.Profile, error) {
	u, err := s.users.GetByUsername(ctx, username)
	if err != nil {
		return domain.Profile{}, err
	}
	following, blocking := false, false
	if viewerID != 0 && viewerID != u.ID {
		if following, err = s.follows.IsFollowing(ctx, viewerID, u.ID); err != nil {
			return domain.Profile{}, err
		}
		if blocking, err = blocks(ctx, s.blocks, viewerID, u.ID); err != nil {
			return domain.Profile{}, err
		}
	}
	p := domain.ProfileOf(u, following)
	p.Blocking = blocking
	return p, nil
}

// Follow makes viewerID follow username. Following twice is the same as following once. A block
// between the two, either way, refuses it (403): checked and written under the pair's lock, so a
// follow cannot commit beside the block that ends it.
func (s *ProfileService) Follow(ctx context.Context, viewerID int64, username string) (domain.Profile, error) {
	u, err := s.users.GetByUsername(ctx, username)
	if err != nil {
		return domain.Profile{}, err
	}
	if u.ID == viewerID {
		return domain.Profile{}, domain.NewValidationError("username", "you cannot follow yourself")
	}
	err = s.uow.InTx(ctx, func(tx Tx) error {
		if err := s.blocks.LockPairIn(ctx, tx, viewerID, u.ID); err != nil {
			return err
		}
		viewerBlocks, targetBlocks, err := s.blocks.BetweenIn(ctx, tx, viewerID, u.ID)
		switch {
		case err != nil:
			return err
		case targetBlocks:
			return domain.ErrBlockedByTarget
		case viewerBlocks:
			return domain.ErrBlockingTarget
		}
		return s.follows.FollowIn(ctx, tx, viewerID, u.ID)
	})
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) { // the follower vanished mid-request
			return domain.Profile{}, domain.ErrUnauthorized
		}
		return domain.Profile{}, err
	}
	return domain.ProfileOf(u, true), nil
}

// Unfollow makes viewerID stop following username. Unfollowing someone not followed is a no-op.
func (s *ProfileService) Unfollow(ctx context.Context, viewerID int64, username string) (domain.Profile, error) {
	u, err := s.users.GetByUsername(ctx, username)
	if err != nil {
		return domain.Profile{}, err
	}
	if err := s.follows.Unfollow(ctx, viewerID, u.ID); err != nil {
		return domain.Profile{}, err
	}
	return domain.ProfileOf(u, false), nil
}
