package cache

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// TagsCache caches the tag cloud, which every front-end home page asks for: in process (the
// policy's LocalTTL) in front of Redis, so a warm read makes no round trip. A write that can
// change the cloud (a publish, withdrawal, deletion, or an edit of a published article) drops it
// with InvalidateEverywhere, which answers once every instance has dropped its copy: a new tag
// shows on the next read anywhere, not within the broadcast's delay. The TTL only bounds an entry
// whose drop failed.
type TagsCache struct {
	rt  *ReadThrough[[]string]
	key string
}

// TagsTTL is how long the tag cloud is served from Redis.
const TagsTTL = 30 * time.Second

// NewTagsCache returns the tag cache.
func NewTagsCache(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *TagsCache {
	policy.TTL, policy.Jitter = TagsTTL, TagsTTL/5
	return &TagsCache{rt: NewReadThrough[[]string](rdb, "tags", policy, log), key: ks.Key("tags")}
}

// Get returns the tags, calling load on a miss.
func (c *TagsCache) Get(ctx context.Context, load func(context.Context) ([]string, error)) ([]string, error) {
	return c.rt.Get(ctx, c.key, load)
}

// Invalidate drops the cached cloud; the next read on this instance recomputes it, the others
// drop their copies when the broadcast reaches them (for writes that cannot change the cloud).
func (c *TagsCache) Invalidate(ctx context.Context) error {
	return c.rt.Delete(ctx, c.key)
}

// InvalidateEverywhere is Invalidate that returns once every instance has dropped its in-process
// copy (any write that can change the cloud: it shows on the next request anywhere).
func (c *TagsCache) InvalidateEverywhere(ctx context.Context) error {
	return c.rt.DeleteAcked(ctx, c.key)
}
