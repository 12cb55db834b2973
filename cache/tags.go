package cache

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// TagsCache caches the tag cloud, which every front-end home page asks for. Every committed
// article write drops it (Invalidate), so a new tag shows on the next read; the TTL only bounds
// an entry whose drop failed. It has no in-process tier: the cloud is one key, and a drop made by
// one instance must count on every instance at once.
type TagsCache struct {
	rt  *ReadThrough[[]string]
	key string
}

// TagsTTL is how long the tag cloud is served from Redis.
const TagsTTL = 30 * time.Second

// NewTagsCache returns the tag cache.
func NewTagsCache(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *TagsCache {
	policy.TTL, policy.Jitter = TagsTTL, TagsTTL/5
	policy.LocalTTL, policy.Broadcast = 0, nil // no instance keeps a copy, so there is nothing to tell them
	return &TagsCache{rt: NewReadThrough[[]string](rdb, "tags", policy, log), key: ks.Key("tags")}
}

// Get returns the tags, calling load on a miss.
func (c *TagsCache) Get(ctx context.Context, load func(context.Context) ([]string, error)) ([]string, error) {
	return c.rt.Get(ctx, c.key, load)
}

// Invalidate drops the cached cloud; the next read recomputes it.
func (c *TagsCache) Invalidate(ctx context.Context) error {
	return c.rt.Delete(ctx, c.key)
}

// InvalidateEverywhere is Invalidate that returns once every instance has dropped its in-process
// copy (a moderation write: hidden content leaves the cloud on the next request anywhere).
func (c *TagsCache) InvalidateEverywhere(ctx context.Context) error {
	return c.rt.DeleteAcked(ctx, c.key)
}
