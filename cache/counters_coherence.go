package cache

import (
	"context"
	"time"
)

// distrust remembers hashes as possibly wrong: they are marked suspect once Redis answers again.
func (c *Counters) distrust(ctx context.Context, keys ...string) {
	for _, k := range keys {
		if !c.repair.add(k) {
			c.log.WarnContext(ctx, "too many counter hashes to repair; this one stays stale until it expires", "key", k)
		}
	}
	c.repairer.kick()
}

// suspectDistrusted marks the distrusted hashes suspect and returns the token each got. Call it
// only right after Redis answered; what cannot be marked now is kept for later.
func (c *Counters) suspectDistrusted(ctx context.Context) map[string]string {
	if c.repair.n.Load() == 0 || time.Since(time.Unix(0, c.repair.failedAt.Load())) < 500*time.Millisecond {
		return nil // nothing to mark, or Redis just failed
	}
	keys := c.repair.take()
	defer c.repair.settle(keys)
	if len(keys) == 0 {
		return nil // another read or the repairer is writing them
	}
	tokens, err := c.suspectTokens(context.WithoutCancel(ctx), keys)
	if err != nil {
		c.distrust(ctx, keys...)
		c.repair.failedAt.Store(time.Now().UnixNano())
		c.log.WarnContext(ctx, "marking distrusted counter hashes failed; retrying later", "err", err)
		return nil
	}
	return tokens
}
