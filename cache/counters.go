package cache

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
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

// Counters keeps the interaction counters in Redis — one hash per item, with an in-process tier
// of up to a second in front — coherent with PostgreSQL, which holds the truth. Repositories say
// what happened to the counts; Counters decides how Redis and the in-process tier follow. One per
// process, shared by every repository that reads or changes counts.
//
// Its methods' contracts:
//
//   - Read(ctx, biz, ids, load) returns the counters of every id. Hits come from the in-process
//     tier or Redis (one round trip for the batch); every miss goes through the shared read-through
//     path: ids this process is already loading are joined, the others are loaded with ONE call of
//     load, whatever the number of concurrent readers (load runs detached from the caller, bounded
//     by Policy.LoadTimeout). Ids that load leaves out count zero, and are cached as zeros. The
//     loaded hashes are written back with the policy's TTL plus jitter. When Redis fails, every id
//     is loaded and nothing is written back; load's error is returned as is.
//   - Changed(tx, biz, field, deltas) registers on the unit of work tx that field of each id in
//     deltas moves by its delta when tx commits: from now until tx has ended the counts count as
//     changing (see Changing); after the commit the hashes are incremented (only where they exist,
//     so a hash is never re-created holding one field); when the commit's outcome is unknown the
//     hashes are dropped once PostgreSQL answers again. Call it inside the unit of work, before it
//     commits. Nothing is returned: failures are logged and repaired.
//   - Changing(biz, ids...) is the same for a change that is not made in a Tx (a single
//     autocommitted statement): the counts of ids are about to change. Call it before the
//     statement runs, then Committed(ctx, field, deltas) once it has (or Unknown(ctx) when its
//     outcome is unknown), and Done() in every case.
//   - Fill(ctx, biz, counters) writes whole hashes (for seeding and tests); Key(biz, id) names an
//     item's hash.
//
// What it guarantees: a hash whose increment failed (Redis down or timing out) is dropped as soon
// as Redis answers again, and refilled from PostgreSQL by the next read; a fill that raced a
// change of this process (a like under way while the fill read PostgreSQL) is dropped right away,
// so it cannot keep a count that missed or doubled the change. Changes made by other instances are
// not seen (docs/REDIS.md, "Counters across instances").
//
// Every change of a hash this process makes passes through the read-through path's changing and
// changed hooks, which is where a cross-instance broadcaster of post-commit changes plugs in.
type Counters struct {
	rdb    redis.UniversalClient
	ks     Keyspace
	ttl    time.Duration
	jitter time.Duration
	log    *slog.Logger
	rt     *readThrough[domain.Counters]

	changes changeLog // count changes under way, for refills to tell whether one raced them
	repair  repairSet // hashes that may be wrong, to drop once Redis (and maybe PostgreSQL) answers

	Stats Stats
}

// Tx is the unit of work a count change is made in (repository.Tx).
type Tx interface {
	AfterCommit(fn func(ctx context.Context))
	IfCommitUnknown(fn func(ctx context.Context))
	Finally(fn func())
}

// CountersLoader loads the counters of ids from PostgreSQL in one query; ids without a row may be
// left out (they count zero).
type CountersLoader func(ctx context.Context, ids []int64) (map[int64]domain.Counters, error)

// countersLocalTTL caps the in-process tier for counters: counts move far more often than article
// or user entries, so another instance's likes should show within a second.
const countersLocalTTL = time.Second

// NewCounters returns the counters component; hashes live for the policy's TTL plus jitter. With
// Policy.LocalTTL set, counters are also kept in process for up to a second, and every change this
// process makes drops its local copy at once.
func NewCounters(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *Counters {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Counters{rdb: rdb, ks: ks, ttl: policy.TTL, jitter: policy.Jitter, log: log}
	if policy.LocalTTL > 0 {
		policy.LocalTTL = min(policy.LocalTTL, countersLocalTTL)
	}
	c.rt = newReadThroughCore[domain.Counters]("counters", policy, log, &c.Stats, c.lookup)
	return c
}

// Key is the hash of one item (tests inspect it).
func (c *Counters) Key(biz domain.Biz, id int64) string {
	return c.ks.Key("counters", string(biz), strconv.FormatInt(id, 10))
}

// Read returns the counters of every id (see Counters).
func (c *Counters) Read(ctx context.Context, biz domain.Biz, ids []int64, load CountersLoader) (map[int64]domain.Counters, error) {
	keys, idOf := c.keys(biz, ids)
	got, err := c.rt.get(ctx, keys, func(ctx context.Context, keys []string, writeBack bool) (map[string]entry[domain.Counters], error) {
		return c.fetch(ctx, keys, idOf, writeBack, load)
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]domain.Counters, len(got))
	for k, e := range got {
		out[idOf[k]] = e.v
	}
	return out, nil
}

// fetch is one load of missing hashes, and their fill.
func (c *Counters) fetch(ctx context.Context, keys []string, idOf map[string]int64, writeBack bool, load CountersLoader) (map[string]entry[domain.Counters], error) {
	ids := make([]int64, len(keys))
	for i, k := range keys {
		ids[i] = idOf[k]
	}
	since := c.changes.mark() // before PostgreSQL is read
	loaded, err := load(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]entry[domain.Counters], len(keys))
	for _, k := range keys {
		out[k] = entry[domain.Counters]{v: loaded[idOf[k]]}
	}
	if !writeBack {
		return out, nil
	}
	c.dropDistrusted(ctx, true) // both stores just answered
	if err := c.fill(ctx, out); err != nil {
		c.log.WarnContext(ctx, "counter cache fill failed", "err", err)
	}
	// A change of a filled item that was under way while this load read and filled may have found
	// no hash to increment (the fill then holds the count before it) or incremented a fill that
	// already counted it: either way the hash is wrong, so drop it, and let the next read fill it
	// again. What was loaded is still served: it is what PostgreSQL said.
	if raced := c.changes.raced(keys, since); len(raced) > 0 {
		for _, k := range raced {
			c.distrust(ctx, k, false)
		}
		c.dropDistrusted(ctx, false)
	}
	return out, nil
}

// Changed registers a count change made in tx (see Counters).
func (c *Counters) Changed(tx Tx, biz domain.Biz, field string, deltas map[int64]int64) {
	if len(deltas) == 0 {
		return
	}
	ids := make([]int64, 0, len(deltas))
	for id := range deltas {
		ids = append(ids, id)
	}
	ch := c.Changing(biz, ids...)
	tx.AfterCommit(func(ctx context.Context) { ch.Committed(ctx, field, deltas) })
	tx.IfCommitUnknown(func(ctx context.Context) { ch.Unknown(ctx) })
	tx.Finally(ch.Done)
}

// CountChange is a change of counts under way (see Counters.Changing).
type CountChange struct {
	c    *Counters
	biz  domain.Biz
	keys []string
	once sync.Once
}

// Changing records that the counts of ids are about to change (see Counters).
func (c *Counters) Changing(biz domain.Biz, ids ...int64) *CountChange {
	keys, _ := c.keys(biz, ids)
	c.changes.begin(keys)
	return &CountChange{c: c, biz: biz, keys: keys}
}

// Committed mirrors the committed change into the hashes: field of each id moves by its delta,
// where the hash exists. A failed increment (which may also have run) leaves the hashes
// untrustworthy: they are dropped once Redis answers again.
func (ch *CountChange) Committed(ctx context.Context, field string, deltas map[int64]int64) {
	c := ch.c
	ctx = context.WithoutCancel(ctx)
	keys := make([]string, 0, len(deltas))
	calls := make([]scriptCall, 0, len(deltas))
	for id, d := range deltas {
		k := c.Key(ch.biz, id)
		keys = append(keys, k)
		calls = append(calls, scriptCall{key: k, args: []any{field, d}})
	}
	c.rt.changing(keys...)
	err := runScript(ctx, c.rdb, incrIfExists, calls)
	c.rt.changed(keys...)
	if err != nil {
		c.log.WarnContext(ctx, "counter cache update failed", "biz", ch.biz, "field", field, "items", len(deltas), "err", err)
		for _, k := range keys {
			c.distrust(ctx, k, false)
		}
		return
	}
	c.dropDistrusted(ctx, true) // both stores just answered
}

// Unknown records that the change may or may not have been committed: its hashes are dropped
// once PostgreSQL answers again (not before: while it is down the hashes are what serves reads).
func (ch *CountChange) Unknown(ctx context.Context) {
	ch.c.rt.changed(ch.keys...)
	for _, k := range ch.keys {
		ch.c.distrust(ctx, k, true)
	}
}

// Done ends the change; refills may trust the hashes again. It may be called more than once.
func (ch *CountChange) Done() { ch.once.Do(func() { ch.c.changes.end(ch.keys) }) }

// Fill writes whole hashes, each with its TTL plus jitter, replacing what they held.
func (c *Counters) Fill(ctx context.Context, biz domain.Biz, counters map[int64]domain.Counters) error {
	byKey := make(map[string]entry[domain.Counters], len(counters))
	keys := make([]string, 0, len(counters))
	for id, n := range counters {
		k := c.Key(biz, id)
		byKey[k] = entry[domain.Counters]{v: n}
		keys = append(keys, k)
	}
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	return c.fill(ctx, byKey)
}

// keys returns the hash keys of ids, without repeats, and the id of each key.
func (c *Counters) keys(biz domain.Biz, ids []int64) ([]string, map[string]int64) {
	keys := make([]string, 0, len(ids))
	idOf := make(map[string]int64, len(ids))
	for _, id := range ids {
		k := c.Key(biz, id)
		if _, dup := idOf[k]; !dup {
			idOf[k] = id
			keys = append(keys, k)
		}
	}
	return keys, idOf
}

// lookup reads the hashes of keys in one round trip. Once Redis has answered, the hashes that
// were distrusted are dropped; what was just read of them is reported missing.
func (c *Counters) lookup(ctx context.Context, keys []string) (map[string]entry[domain.Counters], error) {
	cmds := make([]*redis.SliceCmd, len(keys))
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, k, FieldReads, FieldLikes, FieldCollects)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "counter cache read failed, serving from the database", "err", err)
		}
		return nil, fmt.Errorf("counters: read: %w", err)
	}
	found := make(map[string]entry[domain.Counters], len(keys))
	for i, k := range keys {
		vals := cmds[i].Val()
		if len(vals) != 3 || (vals[0] == nil && vals[1] == nil && vals[2] == nil) {
			continue
		}
		found[k] = entry[domain.Counters]{v: domain.Counters{Reads: toInt(vals[0]), Likes: toInt(vals[1]), Collects: toInt(vals[2])}}
	}
	for k := range c.dropDistrusted(ctx, false) {
		delete(found, k)
	}
	return found, nil
}

// fill writes whole hashes, each with its TTL, atomically per hash (no hash without expiry): one
// script per hash sets the fields and the expiry, and the scripts go in one plain pipeline. (Not
// MULTI/EXEC: a transaction over many keys is refused by a Redis Cluster when they lie in several
// slots; a pipeline is split by node.)
func (c *Counters) fill(ctx context.Context, counters map[string]entry[domain.Counters]) error {
	calls := make([]scriptCall, 0, len(counters))
	for k, e := range counters {
		ttl := max(jittered(c.ttl, c.jitter).Milliseconds(), 1)
		n := e.v
		calls = append(calls, scriptCall{key: k, args: []any{ttl, FieldReads, n.Reads, FieldLikes, n.Likes, FieldCollects, n.Collects}})
	}
	if err := runScript(ctx, c.rdb, countersFill, calls); err != nil {
		return fmt.Errorf("counters: fill: %w", err)
	}
	return nil
}

// drop deletes a hash.
func (c *Counters) drop(ctx context.Context, key string) error {
	c.rt.changing(key)
	defer c.rt.changed(key)
	return c.rdb.Del(ctx, key).Err()
}

// scriptCall is one run of a single-key script.
type scriptCall struct {
	key  string
	args []any
}

// runScript runs script once per call in one pipeline. EVALSHA first (the script is not resent
// with every call); the nodes that do not have the script yet answer NOSCRIPT, and those calls
// are sent again with the script itself (EVAL), which also caches it there.
func runScript(ctx context.Context, rdb redis.UniversalClient, script *redis.Script, calls []scriptCall) error {
	if len(calls) == 0 {
		return nil
	}
	cmds := make([]*redis.Cmd, len(calls))
	_, perr := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, call := range calls {
			cmds[i] = script.EvalSha(ctx, p, []string{call.key}, call.args...)
		}
		return nil
	})
	var again []scriptCall
	for i, cmd := range cmds {
		switch err := cmd.Err(); {
		case err == nil:
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			again = append(again, calls[i])
		default:
			return err
		}
	}
	if len(again) == 0 {
		return perr // nil, or a failure not reported by any command (go-redis puts one on each)
	}
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, call := range again {
			script.Eval(ctx, p, []string{call.key}, call.args...)
		}
		return nil
	})
	return err
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
