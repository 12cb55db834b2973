package cache

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// Counter field names in an item's hash; they match the columns of the interactives table.
const (
	FieldReads    = "read_cnt"
	FieldLikes    = "like_cnt"
	FieldCollects = "collect_cnt"
)

//go:embed lua/incr_if_exists.lua
var incrIfExistsSrc string

//go:embed lua/counters_fill.lua
var countersFillSrc string

var (
	incrIfExists = redis.NewScript(incrIfExistsSrc)
	countersFill = redis.NewScript(countersFillSrc)
)

// CountersCache mirrors the interaction counters in one Redis hash per item. PostgreSQL holds the
// truth; a missing hash is filled from it on the next read.
type CountersCache struct {
	rdb    redis.UniversalClient
	ks     Keyspace
	ttl    time.Duration
	jitter time.Duration
	local  *local[domain.Counters] // nil unless Policy.LocalTTL > 0
}

// countersLocalTTL caps the in-process tier for counters: counts move far more often than article
// or user entries, so another instance's likes should show within a second.
const countersLocalTTL = time.Second

// NewCountersCache returns the counters cache; hashes live for the policy's TTL plus jitter. With
// Policy.LocalTTL set, counters are also kept in process for up to a second, and every change this
// process makes (likes, collects, read batches) drops its local copy at once.
func NewCountersCache(rdb redis.UniversalClient, ks Keyspace, policy Policy) *CountersCache {
	c := &CountersCache{rdb: rdb, ks: ks, ttl: policy.TTL, jitter: policy.Jitter}
	if policy.LocalTTL > 0 {
		c.local = newLocal[domain.Counters](min(policy.LocalTTL, countersLocalTTL), policy.LocalMax)
	}
	return c
}

// forget drops the local copies of items this process just changed.
func (c *CountersCache) forget(biz domain.Biz, ids ...int64) {
	if c.local == nil {
		return
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = c.Key(biz, id)
	}
	c.local.delete(keys...)
}

// Key is the hash of one item (tests inspect it).
func (c *CountersCache) Key(biz domain.Biz, id int64) string {
	return c.ks.Key("counters", string(biz), strconv.FormatInt(id, 10))
}

// Get reads the hashes of ids in one round trip. It returns the counters found and the ids whose
// hash is missing.
func (c *CountersCache) Get(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, []int64, error) {
	found := make(map[int64]domain.Counters, len(ids))
	if len(ids) == 0 {
		return found, nil, nil
	}
	var stamps map[int64]uint64
	if c.local != nil {
		stamps = make(map[int64]uint64, len(ids))
		rest := ids[:0:0]
		for _, id := range ids {
			e, ok, stamp := c.local.get(c.Key(biz, id))
			if ok {
				found[id] = e.v
				continue
			}
			stamps[id] = stamp
			rest = append(rest, id)
		}
		if len(rest) == 0 {
			return found, nil, nil
		}
		ids = rest
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, c.Key(biz, id), FieldReads, FieldLikes, FieldCollects)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("counters: read: %w", err)
	}
	var missing []int64
	for i, id := range ids {
		vals := cmds[i].Val()
		if len(vals) != 3 || (vals[0] == nil && vals[1] == nil && vals[2] == nil) {
			missing = append(missing, id)
			continue
		}
		found[id] = domain.Counters{Reads: toInt(vals[0]), Likes: toInt(vals[1]), Collects: toInt(vals[2])}
		if c.local != nil {
			c.local.setIfUnchanged(c.Key(biz, id), found[id], false, stamps[id])
		}
	}
	return found, missing, nil
}

// Fill writes whole hashes, each with its TTL, atomically per hash (no hash without expiry): one
// script per hash sets the fields and the expiry, and the scripts go in one plain pipeline. (Not
// MULTI/EXEC: a transaction over many keys is refused by a Redis Cluster when they lie in several
// slots; a pipeline is split by node.)
func (c *CountersCache) Fill(ctx context.Context, biz domain.Biz, counters map[int64]domain.Counters) error {
	if len(counters) == 0 {
		return nil
	}
	forgetAll := func() {
		for id := range counters {
			c.forget(biz, id)
		}
	}
	forgetAll()
	defer forgetAll()
	type fill struct {
		key  string
		args []any
	}
	fills := make([]fill, 0, len(counters))
	for id, n := range counters {
		ttl := max(jittered(c.ttl, c.jitter).Milliseconds(), 1)
		fills = append(fills, fill{key: c.Key(biz, id),
			args: []any{ttl, FieldReads, n.Reads, FieldLikes, n.Likes, FieldCollects, n.Collects}})
	}
	// EVALSHA first (the script is not resent with every hash); the nodes that do not have the
	// script yet answer NOSCRIPT, and those hashes are sent again with the script itself (EVAL),
	// which also caches it there.
	cmds := make([]*redis.Cmd, len(fills))
	_, perr := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, f := range fills {
			cmds[i] = countersFill.EvalSha(ctx, p, []string{f.key}, f.args...)
		}
		return nil
	})
	var again []fill
	for i, cmd := range cmds {
		switch err := cmd.Err(); {
		case err == nil:
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			again = append(again, fills[i])
		default:
			return fmt.Errorf("counters: fill: %w", err)
		}
	}
	if len(again) == 0 {
		if perr != nil { // not reported by any command (go-redis puts a failure on each)
			return fmt.Errorf("counters: fill: %w", perr)
		}
		return nil
	}
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, f := range again {
			countersFill.Eval(ctx, p, []string{f.key}, f.args...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("counters: fill: %w", err)
	}
	return nil
}

// Incr adds delta to one counter of an item if its hash exists, atomically. It reports whether
// it did.
func (c *CountersCache) Incr(ctx context.Context, biz domain.Biz, id int64, field string, delta int64) (bool, error) {
	c.forget(biz, id)
	defer c.forget(biz, id) // again once Redis has it: a read that fetched before must not keep its copy
	n, err := incrIfExists.Run(ctx, c.rdb, []string{c.Key(biz, id)}, field, delta).Int()
	if err != nil {
		return false, fmt.Errorf("counters: incr %s: %w", field, err)
	}
	return n == 1, nil
}

// Invalidate drops an item's hash.
func (c *CountersCache) Invalidate(ctx context.Context, biz domain.Biz, id int64) error {
	c.forget(biz, id)
	defer c.forget(biz, id)
	return c.rdb.Del(ctx, c.Key(biz, id)).Err()
}

func toInt(v any) int64 {
	s, ok := v.(string)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// IncrMany adds deltas to one counter field of many items, each only if its hash exists, in one
// pipelined round trip of the same script Incr uses.
func (c *CountersCache) IncrMany(ctx context.Context, biz domain.Biz, field string, deltas map[int64]int64) error {
	if len(deltas) == 0 {
		return nil
	}
	forgetAll := func() {
		for id := range deltas {
			c.forget(biz, id)
		}
	}
	forgetAll()
	defer forgetAll() // again once Redis has them: a read that fetched before must not keep its copy
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for id, d := range deltas {
			incrIfExists.Eval(ctx, p, []string{c.Key(biz, id)}, field, d)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("counters: incr %s of %d items: %w", field, len(deltas), err)
	}
	return nil
}
