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

// CutPage keeps the first limit items of a read that asked for limit+1 and reports whether the
// extra one came: a next page exists exactly when it did, so a list never offers a cursor to an
// empty page (a full last page was indistinguishable from a page with more after it).
func CutPage[T any](items []T, limit int) ([]T, bool) {
	if len(items) > limit {
		return items[:limit], true
	}
	return items, false
}
