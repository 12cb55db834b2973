package cache

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"inkwell/domain"
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

//go:embed lua/counters_begin.lua
var countersBeginSrc string

//go:embed lua/counters_abort.lua
var countersAbortSrc string

var (
	incrIfExists  = redis.NewScript(incrIfExistsSrc)
	countersFill  = redis.NewScript(countersFillSrc)
	countersBegin = redis.NewScript(countersBeginSrc)
	countersAbort = redis.NewScript(countersAbortSrc)
)

// How long a begun write holds off fills at most (a writer that dies releases it by expiry; every
// begun write renews it), and how long an item's epoch is kept after a write found no hash to
// increment: longer than a reader takes from reading the epoch to filling the hash.
const (
	writeHold = 30 * time.Second
	epochKeep = time.Minute
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

// Key is the hash of one item (tests inspect it). Its hash tag {biz:id} is shared with the
// item's other keys (see keys).
func (c *CountersCache) Key(biz domain.Biz, id int64) string {
	return c.ks.Key("counters", "{"+string(biz)+":"+strconv.FormatInt(id, 10)+"}")
}

// keys are what every counter script takes: the item's hash, its count of writes in flight, and
// its epoch (bumped by every increment that found no hash). They share a hash tag, so on a Redis
// Cluster one script can touch all three.
func (c *CountersCache) keys(biz domain.Biz, id int64) []string {
	h := c.Key(biz, id)
	return []string{h, h + ":writing", h + ":epoch"}
}

// Epochs reads the epochs of ids, in one round trip. A reader takes them before it loads missing
// counters from PostgreSQL and hands them to Fill.
func (c *CountersCache) Epochs(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cmds := make([]*redis.StringCmd, len(ids))
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Get(ctx, c.keys(biz, id)[2])
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("counters: read epochs: %w", err)
	}
	for i, id := range ids {
		out[id] = toInt(cmds[i].Val())
	}
	return out, nil
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
			stamps[id] = c.local.stamp(c.Key(biz, id))
			if e, ok := c.local.get(c.Key(biz, id)); ok {
				found[id] = e.v
				continue
			}
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

// Fill writes whole hashes loaded from PostgreSQL, each with its TTL, atomically per hash (no
// hash without expiry), in one pipeline of single-item scripts. (Not MULTI/EXEC: a transaction
// over many keys is refused by a Redis Cluster when they lie in several slots; a pipeline is split
// by node.) epochs are the items' epochs read before loading (Epochs; a missing one counts as 0).
// An item with a write in flight, or whose epoch moved since, is not filled (see
// lua/counters_fill.lua): the loaded count may be off by that write, so it is served but not cached.
func (c *CountersCache) Fill(ctx context.Context, biz domain.Biz, counters map[int64]domain.Counters, epochs map[int64]int64) error {
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
	calls := make([]scriptCall, 0, len(counters))
	for id, n := range counters {
		ttl := max(jittered(c.ttl, c.jitter).Milliseconds(), 1)
		calls = append(calls, scriptCall{keys: c.keys(biz, id),
			args: []any{ttl, epochs[id], FieldReads, n.Reads, FieldLikes, n.Likes, FieldCollects, n.Collects}})
	}
	if _, err := c.runEach(ctx, countersFill, calls); err != nil {
		return fmt.Errorf("counters: fill: %w", err)
	}
	return nil
}

// BeginWrite announces count changes of ids before their PostgreSQL transaction: until each is
// ended (Incr, IncrMany or AbortWrite), no reader fills their hashes.
func (c *CountersCache) BeginWrite(ctx context.Context, biz domain.Biz, ids ...int64) error {
	calls := make([]scriptCall, len(ids))
	for i, id := range ids {
		calls[i] = scriptCall{keys: c.keys(biz, id), args: []any{writeHold.Milliseconds()}}
	}
	if _, err := c.runEach(ctx, countersBegin, calls); err != nil {
		return fmt.Errorf("counters: begin write: %w", err)
	}
	return nil
}

// AbortWrite ends begun writes of ids that changed nothing.
func (c *CountersCache) AbortWrite(ctx context.Context, biz domain.Biz, ids ...int64) error {
	calls := make([]scriptCall, len(ids))
	for i, id := range ids {
		calls[i] = scriptCall{keys: c.keys(biz, id)}
	}
	if _, err := c.runEach(ctx, countersAbort, calls); err != nil {
		return fmt.Errorf("counters: end write: %w", err)
	}
	return nil
}

// scriptCall is one run of a script: its keys and arguments.
type scriptCall struct {
	keys []string
	args []any
}

// runEach runs script once per call in one pipeline: EVALSHA first (the script is not resent
// with every call), then, for the calls whose node answered NOSCRIPT, EVAL (which also caches the
// script there).
func (c *CountersCache) runEach(ctx context.Context, script *redis.Script, calls []scriptCall) ([]*redis.Cmd, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.Cmd, len(calls))
	_, perr := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, cl := range calls {
			cmds[i] = script.EvalSha(ctx, p, cl.keys, cl.args...)
		}
		return nil
	})
	var again []int
	for i, cmd := range cmds {
		switch err := cmd.Err(); {
		case err == nil:
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			again = append(again, i)
		default:
			return cmds, err
		}
	}
	if len(again) == 0 {
		return cmds, perr // an error no command reported (go-redis puts a failure on each)
	}
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range again {
			cmds[i] = script.Eval(ctx, p, calls[i].keys, calls[i].args...)
		}
		return nil
	})
	return cmds, err
}

// Incr ends a begun write (BeginWrite) of an item: adds delta to one counter if its hash exists,
// atomically, and reports whether it did.
func (c *CountersCache) Incr(ctx context.Context, biz domain.Biz, id int64, field string, delta int64) (bool, error) {
	c.forget(biz, id)
	defer c.forget(biz, id) // again once Redis has it: a read that fetched before must not keep its copy
	n, err := incrIfExists.Run(ctx, c.rdb, c.keys(biz, id), field, delta, epochKeep.Milliseconds()).Int()
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

// IncrMany ends begun writes of many items: adds deltas to one counter field of each, only if
// its hash exists, in one pipelined round trip of the same script Incr uses.
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
	calls := make([]scriptCall, 0, len(deltas))
	for id, d := range deltas {
		calls = append(calls, scriptCall{keys: c.keys(biz, id), args: []any{field, d, epochKeep.Milliseconds()}})
	}
	if _, err := c.runEach(ctx, incrIfExists, calls); err != nil {
		return fmt.Errorf("counters: incr %s of %d items: %w", field, len(deltas), err)
	}
	return nil
}
