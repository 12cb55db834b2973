package domain

import "time"

// BlockedError refuses an act between two users one of whom blocks the other: a follow, a
// comment on the blocker's article (403). Field and Message are the error body's.
type BlockedError struct {
	Field   string
	Message string
}

func (e *BlockedError) Error() string { return e.Field + " " + e.Message }

// Unwrap makes a BlockedError an ErrForbidden.
func (e *BlockedError) Unwrap() error { return ErrForbidden }

// Refusals of a block.
var (
	// ErrBlockedByTarget: the user acted on blocks the caller.
	ErrBlockedByTarget = &BlockedError{Field: "profile", Message: "has blocked you: you cannot follow them or comment on their articles"}
	// ErrBlockingTarget: the caller blocks the user acted on (unblock them first).
	ErrBlockingTarget = &BlockedError{Field: "profile", Message: "is blocked by you: unblock them first"}
)

// BlockedUser is one entry of a user's block list: whom, and since when.
type BlockedUser struct {
	UserID    int64
	Username  string
	Bio       string
	Image     string
	BlockedAt time.Time
}

// BlockSet is the set of users a viewer blocks, for filtering what the viewer's lists show.
type BlockSet map[int64]struct{}

// NewBlockSet returns the set of ids.
func NewBlockSet(ids []int64) BlockSet {
	s := make(BlockSet, len(ids))
	for _, id := range ids {
		s[id] = struct{}{}
	}
	return s
}

// Has reports whether id is in the set (a nil set has nobody).
func (s BlockSet) Has(id int64) bool {
	_, ok := s[id]
	return ok
}
