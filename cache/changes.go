package cache

import "time"

// Changes tells a memo of derived documents (the Atom and RSS feeds, the sitemaps: built from
// cached lists, articles and users, or read from PostgreSQL) whether it may still serve what it
// built. Every change of a cached key passes through this instance's Broadcaster: its own changes
// are published, the other instances' arrive, a lost subscription flushes every tier. A document
// built under one Version is current while Version still returns that value.
//
// Version also moves on at least every half LocalTTL: a change whose broadcast never reached
// this instance leaves its in-process copies by expiry (LocalTTL), and a memo built from such a
// copy must go no later than the copy would have gone.
type Changes struct {
	b     *Broadcaster
	every time.Duration
	now   func() time.Time
}

// changesEpochBits is how many low bits of a Version count epochs (half LocalTTLs): at one epoch
// a second they wrap after half a year, and a memo lives one epoch.
const changesEpochBits = 24

// NewChanges returns the change clock of the caches that policy describes: no memo is served
// without an in-process tier (LocalTTL) kept coherent by a broadcast.
func NewChanges(policy Policy) *Changes {
	return &Changes{b: policy.Broadcast, every: policy.LocalTTL / 2, now: time.Now}
}

// Version returns the current change version; ok is false while changes cannot be followed (no
// broadcast, no in-process tier, or the subscription down): nothing may be served from a memo.
func (c *Changes) Version() (v uint64, ok bool) {
	if c == nil || c.b == nil || c.every <= 0 || !c.b.Subscribed() {
		return 0, false
	}
	epoch := uint64(c.now().UnixNano() / int64(c.every))
	return c.b.changes.Load()<<changesEpochBits | epoch&(1<<changesEpochBits-1), true
}
