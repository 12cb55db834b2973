package cache

import (
	"context"
	"log/slog"
	"slices"
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
	c := &TagsCache{rt: NewReadThrough[[]string](rdb, "tags", policy, log), key: ks.Key("tags")}
	policy.Broadcast.register(tagsFollowFirstPage{c: c, globalPage: listGlobalKey(ks)})
	return c
}

// tagsFollowFirstPage drops the in-process cloud when another instance says the global first list
// page changed. Every write that can change the cloud changes that page too, and v0.1.0, which
// kept the cloud in Redis only, drops the cloud there without telling anyone: during a rolling
// upgrade from it, this is how an instance of this release hears of an old one's publish,
// withdrawal or tag edit (TestTagsAcrossInstances through make test-upgrade). This release's own
// writes drop the cloud everywhere themselves (InvalidateEverywhere).
type tagsFollowFirstPage struct {
	c          *TagsCache
	globalPage string
}

func (f tagsFollowFirstPage) delete(keys ...string) {
	if slices.Contains(keys, f.globalPage) {
		f.c.rt.rt.changing(f.c.key)
	}
}

func (tagsFollowFirstPage) flush() {} // the cloud's own tier is flushed with the others

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
