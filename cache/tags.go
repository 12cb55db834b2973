package cache

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// TagsCache caches the tag cloud, which every front-end home page asks for. It is recomputed at
// most once per short TTL; a tag appearing a few seconds late is harmless.
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
