package service

import (
	"context"
	"errors"
	"slices"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=block.go -destination=mocks/block_mock.go -package=mocks

// BlockedSets reads the set of users a user blocks: what the user's lists leave out, and who may
// not follow the user or comment on the user's articles. Read through a cache with an in-process
// tier, dropped on every instance before a block or unblock answers. Shared with the article,
// comment and profile use cases.
type BlockedSets interface {
	BlockedBy(ctx context.Context, blockerID int64) ([]int64, error)
}

// BlockRepository stores blocks.
type BlockRepository interface {
	BlockedSets
	// LockPairIn serializes tx with every block and follow between a and b until tx ends.
	LockPairIn(ctx context.Context, tx Tx, a, b int64) error
	// BetweenIn reports whether a blocks b and whether b blocks a, in tx.
	BetweenIn(ctx context.Context, tx Tx, a, b int64) (aBlocksB, bBlocksA bool, err error)
	// BlockIn records the block in tx (idempotent) and reports whether it is new.
	BlockIn(ctx context.Context, tx Tx, blockerID, blockedID int64) (bool, error)
	// Unblock removes the block, if any, and reports whether there was one.
	Unblock(ctx context.Context, blockerID, blockedID int64) (bool, error)
	// List returns up to limit of blockerID's blocks after cursor (nil: the newest), newest first.
	List(ctx context.Context, blockerID int64, cursor *domain.Cursor, limit int) ([]domain.BlockedUser, error)
}

// FollowEnder ends a follow in a unit of work (a block ends both directions).
type FollowEnder interface {
	UnfollowIn(ctx context.Context, tx Tx, followerID, followeeID int64) error
}

// BlockService blocks and unblocks users and lists a user's blocks.
type BlockService struct {
	users   UserRepository
	blocks  BlockRepository
	follows FollowEnder
	uow     UnitOfWork
}

// NewBlockService returns a BlockService over its ports.
func NewBlockService(users UserRepository, blocks BlockRepository, follows FollowEnder, uow UnitOfWork) *BlockService {
	return &BlockService{users: users, blocks: blocks, follows: follows, uow: uow}
}

// BlockList is one page of a user's blocks.
type BlockList struct {
	Blocked    []domain.BlockedUser
	NextCursor *domain.Cursor // set when a next page exists
}

// Block makes viewerID block username: in one unit of work the block is stored and the follows
// between the two, both directions, end; the blocker's blocked set is dropped on every instance
// before it returns. Blocking twice is the same as blocking once.
func (s *BlockService) Block(ctx context.Context, viewerID int64, username string) (domain.Profile, error) {
	u, err := s.target(ctx, viewerID, username, "block")
	if err != nil {
		return domain.Profile{}, err
	}
	err = s.uow.InTx(ctx, func(tx Tx) error {
		if err := s.blocks.LockPairIn(ctx, tx, viewerID, u.ID); err != nil {
			return err
		}
		if _, err := s.blocks.BlockIn(ctx, tx, viewerID, u.ID); err != nil {
			return err
		}
		if err := s.follows.UnfollowIn(ctx, tx, viewerID, u.ID); err != nil {
			return err
		}
		return s.follows.UnfollowIn(ctx, tx, u.ID, viewerID)
	})
	if errors.Is(err, domain.ErrNotFound) { // the blocker vanished mid-request
		return domain.Profile{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.Profile{}, err
	}
	p := domain.ProfileOf(u, false)
	p.Blocking = true
	return p, nil
}

// Unblock ends viewerID's block of username; unblocking someone not blocked changes nothing. The
// follows the block ended stay ended.
func (s *BlockService) Unblock(ctx context.Context, viewerID int64, username string) (domain.Profile, error) {
	u, err := s.target(ctx, viewerID, username, "unblock")
	if err != nil {
		return domain.Profile{}, err
	}
	if _, err := s.blocks.Unblock(ctx, viewerID, u.ID); err != nil {
		return domain.Profile{}, err
	}
	return domain.ProfileOf(u, false), nil
}

// List returns viewerID's blocks, newest first, limit at a time.
func (s *BlockService) List(ctx context.Context, viewerID int64, cursor *domain.Cursor, limit int) (BlockList, error) {
	if limit <= 0 || limit > domain.MaxPageLimit {
		limit = domain.DefaultPageLimit
	}
	got, err := s.blocks.List(ctx, viewerID, cursor, limit+1)
	if err != nil {
		return BlockList{}, err
	}
	got, more := domain.CutPage(got, limit)
	out := BlockList{Blocked: got}
	if more {
		last := got[len(got)-1]
		out.NextCursor = &domain.Cursor{CreatedAt: last.BlockedAt, ID: last.UserID}
	}
	return out, nil
}

// target finds the user a block or unblock names; oneself is a validation error.
func (s *BlockService) target(ctx context.Context, viewerID int64, username, verb string) (domain.User, error) {
	if viewerID == 0 {
		return domain.User{}, domain.ErrUnauthorized
	}
	u, err := s.users.GetByUsername(ctx, username)
	if err != nil {
		return domain.User{}, err
	}
	if u.ID == viewerID {
		return domain.User{}, domain.NewValidationError("username", "you cannot "+verb+" yourself")
	}
	return u, nil
}

// blockedSet returns the set viewerID blocks (nil for an anonymous viewer, who blocks nobody).
func blockedSet(ctx context.Context, blocks BlockedSets, viewerID int64) (domain.BlockSet, error) {
	if viewerID == 0 {
		return nil, nil
	}
	ids, err := blocks.BlockedBy(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return domain.NewBlockSet(ids), nil
}

// blocks reports whether blockerID blocks userID, from blockerID's cached set.
func blocks(ctx context.Context, sets BlockedSets, blockerID, userID int64) (bool, error) {
	ids, err := sets.BlockedBy(ctx, blockerID)
	if err != nil {
		return false, err
	}
	return slices.Contains(ids, userID), nil
}

// MaxRefillRounds bounds the reads of one page of a list filtered by the viewer's blocks: the
// first read and up to MaxRefillRounds-1 refills, each of the page's size. When the rounds run out
// before the page is full (the viewer blocks the authors of nearly everything in that stretch of
// the list), the page is served short, possibly empty, with a cursor past everything read, so the
// next page goes on from there: a page never costs more than MaxRefillRounds reads of its size.
const MaxRefillRounds = 4

// filterRefill reads a page of limit items kept by keep from a list read with fetch (up to n items
// after a position, and whether more follow them), refilling from the position after the last item
// read until the page is full, the list ends, or MaxRefillRounds reads (each of limit items) were
// made. It returns the items kept, the position to go on after (the last item kept when the page
// is full, else the last item read), and whether the list may go on after it.
func filterRefill[T, P any](ctx context.Context, limit int, start P,
	fetch func(ctx context.Context, after P, n int) ([]T, bool, error), keep func(T) bool, pos func(T) P,
) (kept []T, next P, more bool, err error) {
	kept, next = make([]T, 0, limit), start
	for range MaxRefillRounds {
		items, rest, err := fetch(ctx, next, limit)
		if err != nil {
			return nil, next, false, err
		}
		for _, it := range items {
			if !keep(it) {
				next = pos(it)
				continue
			}
			if len(kept) == limit {
				// A kept item after a full page: the page ends before it.
				return kept, pos(kept[limit-1]), true, nil
			}
			kept = append(kept, it)
			next = pos(it)
		}
		if !rest {
			return kept, next, false, nil
		}
		if len(kept) == limit {
			return kept, next, true, nil
		}
	}
	return kept, next, true, nil
}
