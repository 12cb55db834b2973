package cache

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Blocks caches, per user, the ids of the users they block: the set every list the user reads is
// filtered by, and that a follow of or comment on the user is checked against. It reads through a
// ReadThrough with its in-process tier, so a warm signed-in read costs a map lookup and no round
// trip (most users block nobody: their entry is an empty list, cached like any other).
//
// Changed drops a user's entry everywhere before the block or unblock answers (DeleteAcked: every
// instance confirms it dropped its in-process copy, or the writer waits for such copies to
// expire), so the blocker's very next request, on any instance, reads the new set. A drop Redis
// does not take is repaired in the background (Policy.Repair); meanwhile this process reads the
// key as a miss, and other instances, whose subscriptions fail with Redis, keep no in-process
// copy either.
type Blocks struct {
	ks  Keyspace
	rt  *ReadThrough[[]int64]
	log *slog.Logger
}

// NewBlocks returns the blocked-set cache.
func NewBlocks(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *Blocks {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Blocks{ks: ks, rt: NewReadThrough[[]int64](rdb, "blocks", policy, log), log: log}
}

// Blocked returns the ids blockerID blocks, loading them with load on a miss.
func (c *Blocks) Blocked(ctx context.Context, blockerID int64, load func(context.Context) ([]int64, error)) ([]int64, error) {
	return c.rt.Get(ctx, c.Key(blockerID), func(ctx context.Context) ([]int64, error) {
		ids, err := load(ctx)
		if ids == nil && err == nil {
			ids = []int64{}
		}
		return ids, err
	})
}

// Changed drops blockerID's cached set on every instance. Call it after the block's commit (or
// the unblock's statement, whatever it returned).
func (c *Blocks) Changed(ctx context.Context, blockerID int64) error {
	return c.rt.DeleteAcked(ctx, c.Key(blockerID))
}

// Key is blockerID's entry (tests inspect it).
func (c *Blocks) Key(blockerID int64) string {
	return c.ks.Key("blocks", strconv.FormatInt(blockerID, 10))
}
