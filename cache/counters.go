package cache

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
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

//go:embed lua/counters_store.lua
var countersStoreSrc string

//go:embed lua/counters_suspect.lua
var countersSuspectSrc string

var (
	countersStore   = redis.NewScript(countersStoreSrc)
	countersSuspect = redis.NewScript(countersSuspectSrc)
)

// CounterRow is one shard row of an item's counters as PostgreSQL holds it: the shard, its counts
// and its version, which every change of the shard moves under the shard row's lock (so a shard's
// versions follow the commit order of its changes). An item's counts are the sums over its shards.
type CounterRow struct {
	domain.Counters
	Version int64
	Shard   int
}

// Counters keeps the interaction counters in Redis — one hash per item, with an in-process tier
// of up to a second in front — coherent with PostgreSQL, which holds the truth, across every
// instance sharing the Redis. Repositories say what happened to the counts; Counters decides how
// Redis and the in-process tier follow. One per process, shared by every repository that reads or
// changes counts.
//
// An item's counts are spread over shard rows in PostgreSQL (so concurrent likes of one item lock
// different rows), each with its own version. A hash holds every shard row of its item with that
// version, and the sums that reads fetch. Every write of a hash — a read's fill (all the item's
// shards) or a committed change's shard row — stores each shard only if newer than the hash's copy
// (lua/counters_store.lua). So no interleaving of loads, commits and writes, on any number of
// instances, can take a shard, or a sum of shards, back in time: a fill that read a shard before a
// change loses to the change's row, and a change's row that arrives late loses to a fill that
// already counted it. A change is stored only into an existing hash (one shard row does not make
// a complete hash); on a hot item the hash exists, so a read right after a like is a hit.
//
// A change whose row could not be written (Redis down or timing out), or whose commit's outcome
// is unknown, may be missing from the hash: the hash is then marked suspect (_s, with a token) as
// soon as Redis answers. Reads reload a suspect hash, serve it as it is only while PostgreSQL
// cannot answer, and lift the mark with a fill whose lookup saw it (the load then read PostgreSQL
// after the mark).
//
// Its methods' contracts:
//
//   - Read(ctx, biz, ids, load) returns the counters of every id. Hits come from the in-process
//     tier or Redis (one round trip for the batch); every miss goes through the shared read-through
//     path: ids this process is already loading are joined, the others are loaded with ONE call of
//     load, whatever the number of concurrent readers (load runs detached from the caller, bounded
//     by Policy.LoadTimeout). Ids that load leaves out count zero. When Redis fails,
//     every id is loaded and nothing is written back; when load fails and Redis still holds suspect
//     counts for every id, those are served; otherwise load's error is returned as is.
//   - Changed(tx, biz, rows) registers on the unit of work tx the shard row its change left of
//     each item (as the statements returned them): after the commit they are written into the
//     hashes that exist; when the commit's outcome is unknown the hashes are marked suspect. Nothing is returned: failures are logged and repaired.
//   - Stored(ctx, biz, rows) and Suspect(ctx, biz, ids...) do the same for a change not made in a
//     Tx (one autocommitted statement): after it succeeded, or when its outcome is unknown.
//   - Fill(ctx, biz, counters) writes whole hashes unconditionally (for seeding and tests);
//     Key(biz, id) names an item's hash.
//
// Every change of a hash this process makes passes through the read-through path's changing and
// changed hooks, which is where the in-process copies are dropped.
type Counters struct {
	rdb    redis.UniversalClient
	ks     Keyspace
	ttl    time.Duration
	jitter time.Duration
	log    *slog.Logger
	rt     *readThrough[domain.Counters]

	repair   repairSet // hashes a change may be missing from, to mark suspect once Redis answers
	repairer *Repairer

	Stats Stats
}

// Tx is the unit of work a count change is made in (pg.Tx).
type Tx interface {
	AfterCommit(fn func(ctx context.Context))
	IfCommitUnknown(fn func(ctx context.Context))
}

// CountersLoader loads every shard row of ids from PostgreSQL in one query; ids without a row may
// be left out (they count zero).
type CountersLoader func(ctx context.Context, ids []int64) (map[int64][]CounterRow, error)

// countersLocalTTL caps the in-process tier for counters: counts move far more often than article
// or user entries.
const countersLocalTTL = time.Second

// NewCounters returns the counters component; hashes live for the policy's TTL plus jitter after
// their last write. With Policy.LocalTTL set, counters are also kept in process for up to a
// second, and every change this process makes drops its local copy at once.
func NewCounters(rdb redis.UniversalClient, ks Keyspace, policy Policy, log *slog.Logger) *Counters {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Counters{rdb: rdb, ks: ks, ttl: policy.TTL, jitter: policy.Jitter, log: log, repairer: policy.Repair}
	if policy.LocalTTL > 0 {
		policy.LocalTTL = min(policy.LocalTTL, countersLocalTTL)
	}
	c.rt = newReadThroughCore[domain.Counters]("counters", policy, log, &c.Stats, c.lookup)
	policy.Repair.register(func(ctx context.Context) int {
		c.suspectDistrusted(ctx)
		return c.repair.size()
	})
	return c
}

// Key is the hash of one item (tests inspect it).
func (c *Counters) Key(biz domain.Biz, id int64) string {
	return c.ks.Key("counters", string(biz), strconv.FormatInt(id, 10))
}

// Read returns the counters of every id (see Counters).
func (c *Counters) Read(ctx context.Context, biz domain.Biz, ids []int64, load CountersLoader) (map[int64]domain.Counters, error) {
	keys, idOf := c.keys(biz, ids)
	got, err := c.rt.get(ctx, keys, func(ctx context.Context, keys []string, seen map[string]string) (map[string]entry[domain.Counters], error) {
		return c.fetch(ctx, keys, idOf, seen, load)
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

// fetch is one load of missing hashes, and their fill (when seen is not nil).
func (c *Counters) fetch(ctx context.Context, keys []string, idOf map[string]int64, seen map[string]string, load CountersLoader) (map[string]entry[domain.Counters], error) {
	ids := make([]int64, len(keys))
	for i, k := range keys {
		ids[i] = idOf[k]
	}
	loaded, err := load(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]entry[domain.Counters], len(keys))
	rows := make(map[string][]CounterRow, len(keys))
	for _, k := range keys {
		shards := loaded[idOf[k]]
		out[k], rows[k] = entry[domain.Counters]{v: sumShards(shards)}, shards
	}
	if seen == nil {
		return out, nil
	}
	if err := c.store(ctx, rows, storeFill, seen); err != nil {
		c.log.WarnContext(ctx, "counter cache fill failed", "err", err)
	}
	return out, nil
}

// Changed registers a count change made in tx, and the rows it left (see Counters).
func (c *Counters) Changed(tx Tx, biz domain.Biz, rows map[int64]CounterRow) {
	if len(rows) == 0 {
		return
	}
	tx.AfterCommit(func(ctx context.Context) { c.Stored(ctx, biz, rows) })
	tx.IfCommitUnknown(func(ctx context.Context) {
		ids := make([]int64, 0, len(rows))
		for id := range rows {
			ids = append(ids, id)
		}
		c.Suspect(ctx, biz, ids...)
	})
}

// Stored writes the rows a committed change left (see Counters).
func (c *Counters) Stored(ctx context.Context, biz domain.Biz, rows map[int64]CounterRow) {
	if len(rows) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	byKey := make(map[string][]CounterRow, len(rows))
	keys := make([]string, 0, len(rows))
	for id, row := range rows {
		k := c.Key(biz, id)
		byKey[k] = []CounterRow{row}
		keys = append(keys, k)
	}
	c.rt.changing(keys...)
	err := c.store(ctx, byKey, storeChange, nil)
	c.rt.changed(keys...)
	if err != nil {
		c.log.WarnContext(ctx, "counter cache update failed", "biz", biz, "items", len(rows), "err", err)
		c.distrust(ctx, keys...)
		return
	}
	c.suspectDistrusted(ctx) // Redis just answered
}

// Suspect marks the hashes of ids suspect: a change of unknown outcome may be missing from them.
// If Redis fails, they are marked once it answers again.
func (c *Counters) Suspect(ctx context.Context, biz domain.Biz, ids ...int64) {
	keys, _ := c.keys(biz, ids)
	ctx = context.WithoutCancel(ctx)
	if err := c.suspect(ctx, keys); err != nil {
		c.log.WarnContext(ctx, "counter cache: marking hashes suspect failed; retrying once Redis answers", "items", len(keys), "err", err)
		c.distrust(ctx, keys...)
	}
}

// Fill writes whole hashes, each with its TTL plus jitter, replacing what they held.
func (c *Counters) Fill(ctx context.Context, biz domain.Biz, counters map[int64]domain.Counters) error {
	rows := make(map[string][]CounterRow, len(counters))
	keys := make([]string, 0, len(counters))
	for id, n := range counters {
		k := c.Key(biz, id)
		rows[k] = []CounterRow{{Counters: n}}
		keys = append(keys, k)
	}
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	return c.store(ctx, rows, storeForce, nil)
}

// The modes of lua/counters_store.lua.
const (
	storeChange = "change"
	storeFill   = "fill"
	storeForce  = "force"
)

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

// lookup reads the hashes of keys in one round trip. Once Redis has answered, the hashes a change
// may be missing from are marked suspect, and what was just read of them is a miss.
func (c *Counters) lookup(ctx context.Context, keys []string) (observed[domain.Counters], error) {
	cmds := make([]*redis.SliceCmd, len(keys))
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, k, FieldReads, FieldLikes, FieldCollects, "_ver", "_s")
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "counter cache read failed, serving from the database", "err", err)
		}
		return observed[domain.Counters]{}, fmt.Errorf("counters: read: %w", err)
	}
	suspected := c.suspectDistrusted(ctx)
	out := newObserved[domain.Counters](len(keys))
	for i, k := range keys {
		vals := cmds[i].Val()
		if len(vals) != 5 || vals[3] == nil { // no hash, or only changes' shards: not complete
			out.seen[k] = ""
			if len(vals) == 5 {
				out.seen[k], _ = vals[4].(string)
			}
			if t := suspected[k]; t != "" {
				out.seen[k] = t
			}
			continue
		}
		counts := domain.Counters{Reads: toInt(vals[0]), Likes: toInt(vals[1]), Collects: toInt(vals[2])}
		token, suspect := vals[4].(string)
		if !suspect && suspected[k] == "" {
			out.hits[k] = entry[domain.Counters]{v: counts}
			continue
		}
		if !suspect {
			token = suspected[k]
		}
		if out.stale == nil {
			out.stale = make(map[string]domain.Counters)
		}
		out.stale[k], out.seen[k] = counts, token
	}
	return out, nil
}

// store writes each hash's shard rows with lua/counters_store.lua in mode (seen: the suspicion
// each fill's lookup saw), one script per hash in one plain pipeline. (Not MULTI/EXEC: a
// transaction over many keys is refused by a Redis Cluster when they lie in several slots; a
// pipeline is split by node.)
func (c *Counters) store(ctx context.Context, rows map[string][]CounterRow, mode string, seen map[string]string) error {
	calls := make([]scriptCall, 0, len(rows))
	for k, shards := range rows {
		ttl := max(jittered(c.ttl, c.jitter).Milliseconds(), 1)
		args := make([]any, 0, 3+5*len(shards))
		args = append(args, ttl, mode, seen[k])
		for _, row := range shards {
			args = append(args, row.Shard, row.Version, row.Reads, row.Likes, row.Collects)
		}
		calls = append(calls, scriptCall{key: k, args: args})
	}
	if err := runScript(ctx, c.rdb, countersStore, calls); err != nil {
		return fmt.Errorf("counters: store: %w", err)
	}
	return nil
}

// suspect marks hashes suspect, each with a token of its own (lua/counters_suspect.lua), and
// returns the tokens.
func (c *Counters) suspect(ctx context.Context, keys []string) error {
	_, err := c.suspectTokens(ctx, keys)
	return err
}

func (c *Counters) suspectTokens(ctx context.Context, keys []string) (map[string]string, error) {
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	tokens := make(map[string]string, len(keys))
	calls := make([]scriptCall, len(keys))
	for i, k := range keys {
		tokens[k] = newToken()
		calls[i] = scriptCall{key: k, args: []any{tokens[k]}}
	}
	return tokens, runScript(ctx, c.rdb, countersSuspect, calls)
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

// sumShards is an item's counts: the sums over its shard rows.
func sumShards(shards []CounterRow) domain.Counters {
	var sum domain.Counters
	for _, row := range shards {
		sum.Reads += row.Reads
		sum.Likes += row.Likes
		sum.Collects += row.Collects
	}
	return sum
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
