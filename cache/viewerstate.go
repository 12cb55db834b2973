package cache

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:embed lua/viewer_fill.lua
var viewerFillSrc string

var viewerFill = redis.NewScript(viewerFillSrc)

// ViewerFlag is one kind of per-viewer state an article's rendering depends on.
type ViewerFlag string

// The flags kept per viewer: ids are article ids (collects), user ids (follows), or the ids of
// the liked kind (LikesOf).
const (
	ViewerCollects ViewerFlag = "collects"
	ViewerFollows  ViewerFlag = "follows"
)

// LikesOf is the flag "likes this item" for items of kind biz.
func LikesOf(biz domain.Biz) ViewerFlag { return ViewerFlag("likes:" + string(biz)) }

// viewerLocalMaxFactor widens the in-process tier: one viewer reading one page holds a key per
// item and flag, far more entries than the article or user tiers.
const viewerLocalMaxFactor = 5

// ViewerState caches, per viewer, flags that make an item's rendering personal: does the viewer
// like this article, have it in a folder, follow its author. One key per viewer, flag and item
// ("1" or "0"), all of one viewer's keys in one hash slot (the tag {v<viewer>}), so a page's
// flags are one MGET and one fill script.
//
// It goes through the shared read-through path (readThrough): the in-process tier (kept
// coherent by the broadcaster, off while its subscription is down), Redis, then the loader
// through flights. Its guarantees are those of ReadThrough:
//
//   - Read-your-writes on every instance: a write changes PostgreSQL, then after its commit
//     (Changed, in the unit of work) replaces the keys with a tombstone of its own and broadcasts
//     them before the write answers. Every later read misses and loads the committed state.
//   - No resurrection: a fill is written only where Redis still holds what the filler's lookup
//     saw before it read PostgreSQL (lua/viewer_fill.lua), so a load that read the old state loses
//     to the write's tombstone; its in-process copy loses to the delete (local's stamps).
//   - Redis failing: reads load from PostgreSQL and write nothing back. A tombstone that could not
//     be written is remembered and written once this process reaches Redis again (Policy.Repair
//     retries it in the background, and the next read or write through this cache writes it);
//     until then other instances that reach Redis may serve the flag as it was. Only an instance
//     cut from Redis while the others are not opens that window, and only for as long as it is.
type ViewerState struct {
	rdb redis.UniversalClient
	ks  Keyspace
	rt  *readThrough[bool]
	log *slog.Logger

	policy Policy
	repair repairSet // keys whose invalidation failed, tombstoned once Redis answers

	Stats Stats
}

// NewViewerState returns the per-viewer state cache.
func NewViewerState(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *ViewerState {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if policy.LocalMax > 0 {
		policy.LocalMax *= viewerLocalMaxFactor
	}
	c := &ViewerState{rdb: rdb, ks: ks, log: log, policy: policy}
	c.rt = newReadThroughCore[bool]("viewer", policy, log, &c.Stats, c.lookup)
	policy.Repair.register(func(ctx context.Context) int {
		c.repairPending(ctx)
		return c.repair.size()
	})
	return c
}

// Key is the entry of viewer's flag for id (tests inspect it).
func (c *ViewerState) Key(viewer int64, flag ViewerFlag, id int64) string {
	return c.ks.Key("viewer", "{v"+strconv.FormatInt(viewer, 10)+"}", string(flag), strconv.FormatInt(id, 10))
}

// ViewerLoader reads from PostgreSQL which of ids have the flag set, in one query.
type ViewerLoader func(ctx context.Context, ids []int64) (map[int64]bool, error)

// Among returns which of ids viewer has flag set for (only true entries), loading the misses with
// load in one call.
func (c *ViewerState) Among(ctx context.Context, viewer int64, flag ViewerFlag, ids []int64, load ViewerLoader) (map[int64]bool, error) {
	keys, idOf := c.keys(viewer, flag, ids)
	got, err := c.rt.get(ctx, keys, func(ctx context.Context, keys []string, seen map[string]string) (map[string]entry[bool], error) {
		want := make([]int64, len(keys))
		for i, k := range keys {
			want[i] = idOf[k]
		}
		loaded, err := load(ctx, want)
		if err != nil {
			return nil, err
		}
		out := make(map[string]entry[bool], len(keys))
		for _, k := range keys {
			out[k] = entry[bool]{v: loaded[idOf[k]]}
		}
		if seen != nil {
			c.fill(ctx, keys, seen, out)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(got))
	for k, e := range got {
		if e.v {
			out[idOf[k]] = true
		}
	}
	return out, nil
}

// Changed registers, in the unit of work tx, that viewer's flag for ids may change: once it
// commits (or when its outcome is unknown) the entries are invalidated, before the unit of work
// returns.
func (c *ViewerState) Changed(tx Tx, viewer int64, flag ViewerFlag, ids ...int64) {
	if len(ids) == 0 {
		return
	}
	invalidate := func(ctx context.Context) { c.Invalidate(ctx, viewer, flag, ids...) }
	tx.AfterCommit(invalidate)
	tx.IfCommitUnknown(invalidate)
}

// Invalidate replaces viewer's flag entries for ids with a tombstone of this invalidation, drops
// them from this process's tier and broadcasts them. Call it after PostgreSQL has the change.
// A failure is logged and the keys are tombstoned once Redis answers again.
func (c *ViewerState) Invalidate(ctx context.Context, viewer int64, flag ViewerFlag, ids ...int64) {
	keys, _ := c.keys(viewer, flag, ids)
	c.invalidate(ctx, keys, "viewer", viewer, "flag", flag)
}

// InvalidateViewers is Invalidate of one item's flag for several viewers at once (a batch of
// likes): one pipeline of tombstones and one broadcast for all of them.
func (c *ViewerState) InvalidateViewers(ctx context.Context, viewers []int64, flag ViewerFlag, id int64) {
	keys := make([]string, 0, len(viewers))
	seen := make(map[int64]bool, len(viewers))
	for _, v := range viewers {
		if !seen[v] {
			seen[v] = true
			keys = append(keys, c.Key(v, flag, id))
		}
	}
	c.invalidate(ctx, keys, "viewers", len(keys), "flag", flag, "id", id)
}

func (c *ViewerState) invalidate(ctx context.Context, keys []string, logAttrs ...any) {
	if len(keys) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	c.rt.changing(keys...)
	err := c.writeTombstone(ctx, keys)
	if err != nil {
		// The broadcast would fail like the write; the entry in Redis stays as it was until the
		// repair (see ViewerState), and waiting would not change that.
		c.rt.changed(keys...)
		c.log.WarnContext(ctx, "viewer state invalidation failed; retrying once Redis answers", append(logAttrs, "err", err)...)
		c.distrust(ctx, keys)
		return
	}
	if !c.rt.changedAcked(viewerAckWait, keys...) && c.policy.LocalTTL > 0 {
		// An instance did not confirm that it dropped its copies: wait until they expired.
		c.Stats.Unconfirmed.Add(1)
		time.Sleep(c.policy.LocalTTL)
	}
	c.repairPending(ctx)
}

// viewerAckWait is how long a write waits for every instance to confirm that it dropped the
// viewer's flags, before it waits out their in-process copies instead.
const viewerAckWait = 500 * time.Millisecond

func (c *ViewerState) keys(viewer int64, flag ViewerFlag, ids []int64) ([]string, map[string]int64) {
	keys := make([]string, 0, len(ids))
	idOf := make(map[string]int64, len(ids))
	for _, id := range ids {
		k := c.Key(viewer, flag, id)
		if _, dup := idOf[k]; !dup {
			idOf[k] = id
			keys = append(keys, k)
		}
	}
	return keys, idOf
}

// tombstone writes one new tombstone over keys. The keys may belong to several
// viewers (a repair), so they are SET one by one in a pipeline, which a cluster splits by node.
func (c *ViewerState) tombstone(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	return c.writeTombstone(ctx, keys)
}

func (c *ViewerState) writeTombstone(ctx context.Context, keys []string) error {
	tomb := tombstonePrefix + newToken()
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Set(ctx, k, tomb, tombstoneTTL)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("viewer state: invalidate: %w", err)
	}
	return nil
}

func (c *ViewerState) distrust(ctx context.Context, keys []string) {
	for _, k := range keys {
		if !c.repair.add(k) {
			c.log.WarnContext(ctx, "too many viewer state entries to repair; this one may stay stale until it expires", "key", k)
		}
	}
	c.policy.Repair.kick()
}

// repairPending tombstones the keys whose invalidation failed earlier and returns them. Call it
// right after Redis answered.
func (c *ViewerState) repairPending(ctx context.Context) map[string]bool {
	if c.repair.n.Load() == 0 {
		return nil
	}
	keys := c.repair.take()
	defer c.repair.settle(keys)
	if len(keys) == 0 {
		return nil // another read or the repairer is writing them
	}
	if err := c.tombstone(context.WithoutCancel(ctx), keys); err != nil {
		c.distrust(ctx, keys)
		return nil
	}
	repaired := make(map[string]bool, len(keys))
	for _, k := range keys {
		repaired[k] = true
	}
	return repaired
}

// lookup reads keys (one viewer's, so one slot) with one MGET. Keys just repaired are misses
// whatever the MGET saw, with no fill guard that can match (their tombstone is new).
func (c *ViewerState) lookup(ctx context.Context, keys []string) (observed[bool], error) {
	pending := c.repair.pendingAmong(keys)
	vals, err := c.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "viewer state read failed, serving from the database", "err", err)
		}
		return observed[bool]{}, fmt.Errorf("viewer state: read: %w", err)
	}
	repaired := c.repairPending(ctx)
	out := newObserved[bool](len(keys))
	for i, k := range keys {
		s, _ := vals[i].(string)
		switch {
		case repaired[k] || pending[k] || c.repair.has(k):
			out.seen[k] = unrepaired // never equal to a real tombstone: the fill is dropped
		case vals[i] == nil:
			out.seen[k] = ""
		case s == "1" || s == "0":
			out.hits[k] = entry[bool]{v: s == "1"}
		case strings.HasPrefix(s, tombstonePrefix):
			out.seen[k] = s
		default: // written by another version: a miss the fill replaces
			out.seen[k] = s
		}
	}
	return out, nil
}

// fill stores loaded flags where Redis still holds what the lookup saw, in one script (the
// keys share the viewer's slot).
func (c *ViewerState) fill(ctx context.Context, keys []string, seen map[string]string, vals map[string]entry[bool]) {
	args := make([]any, 0, 2*len(keys)+1)
	for _, k := range keys {
		v := "0"
		if vals[k].v {
			v = "1"
		}
		args = append(args, seen[k], v)
	}
	args = append(args, max(jittered(c.policy.TTL, c.policy.Jitter).Milliseconds(), 1))
	stored, err := viewerFill.Run(ctx, c.rdb, keys, args...).Int()
	switch {
	case err != nil:
		c.log.WarnContext(ctx, "viewer state fill failed", "keys", len(keys), "err", err)
	case stored < len(keys):
		c.Stats.FillsSkipped.Add(int64(len(keys) - stored))
	}
}
