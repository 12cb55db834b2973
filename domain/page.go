package domain

import "time"

// Cursor is a keyset position in a newest-first list: the (created_at, id) of the last item seen.
type Cursor struct {
	CreatedAt time.Time
	ID        int64
}

// Page selects part of a list: by Offset (RealWorld) or, when Cursor is set, after that position.
type Page struct {
	Limit  int
	Offset int
	Cursor *Cursor
}

// Paging limits.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
	MaxPageOffset    = 100_000
)
