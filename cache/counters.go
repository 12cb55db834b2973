package cache

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
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

//go:embed lua/counters_begin.lua
var countersBeginSrc string

//go:embed lua/counters_end.lua
var countersEndSrc string

//go:embed lua/counters_fill.lua
var countersFillSrc string

//go:embed lua/counters_suspect.lua
var countersSuspectSrc string

var (
	countersBegin   = redis.NewScript(countersBeginSrc)
	countersEnd     = redis.NewScript(countersEndSrc)
	countersFill    = redis.NewScript(countersFillSrc)
	countersSuspect = redis.NewScript(countersSuspectSrc)
)

// changeMaxInFlight bounds how long a change may stay between its begin and its end: the marker a
// begin leaves lives this long at least (a process that dies mid-change cannot block fills for
// longer). Units of work and the read batches end far sooner.
const changeMaxInFlight = time.Minute

// Counters keeps the interaction counters in Redis — one hash per item, with an in-process tier
// of up to a second in front — coherent with PostgreSQL, which holds the truth, across every
// instance sharing the Redis. Repositories say what happened to the counts; Counters decides how
// Redis and the in-process tier follow. One per process, shared by every repository that reads or
// changes counts.
//
// Its methods' contracts:
//
//   - Read(ctx, biz, ids, load) returns the counters of every id. Hits come from the in-process
//     tier or Redis (one round trip for the batch); every miss goes through the shared read-through
//     path: ids this process is already loading are joined, the others are loaded with ONE call of
//     load, whatever the number of concurrent readers (load runs detached from the caller, bounded
//     by Policy.LoadTimeout). Ids that load leaves out count zero, and are cached as zeros. The
//     loaded hashes are written back, guarded (below). When Redis fails, every id is loaded and
//     nothing is written back; when load fails and Redis still holds suspect counts for every id,
//     those are served; otherwise load's error is returned as is.
//   - Changed(ctx, tx, biz, field, deltas) registers on the unit of work tx that field of each id
//     in deltas moves by its delta when tx commits. Call it inside the unit of work, before it
//     commits: it marks the hashes as changing at once (see Changing); after the commit they are
//     incremented; when the commit's outcome is unknown they are marked suspect; on rollback the
//     mark is lifted. Nothing is returned: failures are logged and repaired.
//   - Changing(ctx, biz, ids...) is the same for a change that is not made in a Tx (a single
//     autocommitted statement): call it before the statement runs, then Committed(ctx, field,
//     deltas) once it has (or Unknown(ctx) when its outcome is unknown), and Done() in every case.
//   - Fill(ctx, biz, counters) writes whole hashes unconditionally (for seeding and tests);
//     Key(biz, id) names an item's hash.
//
// What it guarantees, whichever instances read and write: a fill never overwrites a newer count.
// Besides the counts (and _v, "counts present"), a hash holds _w, the changes in flight (set
// before their commit, cleared after their increment), and _g, a generation moved by every change
// and every suspicion. A read remembers the generation its lookup saw; its fill is dropped if a
// change is in flight, or if the generation moved, or if the hash already holds trusted counts
// (scripts in lua/counters_*.lua). An increment that may have been lost (Redis down or timing
// out, a commit of unknown outcome) marks the hash suspect (_s) as soon as Redis answers: reads
// then reload it, and serve it as it is only while PostgreSQL cannot answer.
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

	repair repairSet // hashes whose increment may have been lost, to mark suspect once Redis answers

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

// fetch is one load of missing hashes, and their guarded fill (when seen is not nil).
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
	for _, k := range keys {
		out[k] = entry[domain.Counters]{v: loaded[idOf[k]]}
	}
	if seen == nil {
		return out, nil
	}
	if err := c.fill(ctx, out, seen); err != nil {
		c.log.WarnContext(ctx, "counter cache fill failed", "err", err)
	}
	return out, nil
}

// Changed registers a count change made in tx (see Counters).
func (c *Counters) Changed(ctx context.Context, tx Tx, biz domain.Biz, field string, deltas map[int64]int64) {
	if len(deltas) == 0 {
		return
	}
	ids := make([]int64, 0, len(deltas))
	for id := range deltas {
		ids = append(ids, id)
	}
	ch := c.Changing(ctx, biz, ids...)
	tx.AfterCommit(func(ctx context.Context) { ch.Committed(ctx, field, deltas) })
	tx.IfCommitUnknown(func(ctx context.Context) { ch.Unknown(ctx) })
	tx.Finally(ch.Done)
}

// CountChange is a change of counts under way (see Counters.Changing).
type CountChange struct {
	c     *Counters
	biz   domain.Biz
	keys  []string
	ended atomic.Bool
}

// Changing marks the counts of ids as about to change, in Redis, so that no read fills them until
// the change has ended (see Counters). If Redis fails, the hashes are marked suspect once it
// answers again.
func (c *Counters) Changing(ctx context.Context, biz domain.Biz, ids ...int64) *CountChange {
	keys, _ := c.keys(biz, ids)
	calls := make([]scriptCall, len(keys))
	for i, k := range keys {
		calls[i] = scriptCall{key: k, args: []any{changeMaxInFlight.Milliseconds()}}
	}
	if err := runScript(context.WithoutCancel(ctx), c.rdb, countersBegin, calls); err != nil {
		c.log.WarnContext(ctx, "counter cache: marking a change failed", "biz", biz, "items", len(keys), "err", err)
		c.distrust(ctx, keys...)
	}
	return &CountChange{c: c, biz: biz, keys: keys}
}

// Committed mirrors the committed change into the hashes: field of each id moves by its delta,
// where the hash holds counts, and the change ends. A failed increment (which may also have run)
// leaves the hashes untrustworthy: they are marked suspect once Redis answers again.
func (ch *CountChange) Committed(ctx context.Context, field string, deltas map[int64]int64) {
	byKey := make(map[string]int64, len(deltas))
	for id, d := range deltas {
		byKey[ch.c.Key(ch.biz, id)] = d
	}
	calls := make([]scriptCall, len(ch.keys))
	for i, k := range ch.keys {
		calls[i] = scriptCall{key: k, args: []any{field, byKey[k], 0}}
	}
	ch.end(ctx, calls)
}

// Unknown ends a change that may or may not have been committed: its hashes are marked suspect,
// so the next reads reload them from PostgreSQL (and serve them as they are while it is down).
func (ch *CountChange) Unknown(ctx context.Context) {
	calls := make([]scriptCall, len(ch.keys))
	for i, k := range ch.keys {
		calls[i] = scriptCall{key: k, args: []any{FieldLikes, 0, 1}}
	}
	ch.end(ctx, calls)
}

// Done ends the change if Committed or Unknown has not (a rollback): the counts did not move. It
// may be called more than once.
func (ch *CountChange) Done() {
	calls := make([]scriptCall, len(ch.keys))
	for i, k := range ch.keys {
		calls[i] = scriptCall{key: k, args: []any{FieldLikes, 0, 0}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ch.end(ctx, calls)
}

func (ch *CountChange) end(ctx context.Context, calls []scriptCall) {
	if ch.ended.Swap(true) {
		return
	}
	c := ch.c
	ctx = context.WithoutCancel(ctx)
	c.rt.changing(ch.keys...)
	err := runScript(ctx, c.rdb, countersEnd, calls)
	c.rt.changed(ch.keys...)
	if err != nil {
		c.log.WarnContext(ctx, "counter cache update failed", "biz", ch.biz, "items", len(ch.keys), "err", err)
		c.distrust(ctx, ch.keys...)
		return
	}
	c.suspectDistrusted(ctx) // Redis just answered
}

// Fill writes whole hashes, each with its TTL plus jitter, replacing what they held.
func (c *Counters) Fill(ctx context.Context, biz domain.Biz, counters map[int64]domain.Counters) error {
	byKey := make(map[string]entry[domain.Counters], len(counters))
	seen := make(map[string]string, len(counters))
	keys := make([]string, 0, len(counters))
	for id, n := range counters {
		k := c.Key(biz, id)
		byKey[k] = entry[domain.Counters]{v: n}
		seen[k] = fillUnconditionally
		keys = append(keys, k)
	}
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	return c.fill(ctx, byKey, seen)
}

// fillUnconditionally, as a fill's seen generation, makes the fill replace whatever the hash holds.
const fillUnconditionally = "*"

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

// lookup reads the hashes of keys in one round trip. Once Redis has answered, the hashes whose
// increments may have been lost are marked suspect, and what was just read of them is a miss.
func (c *Counters) lookup(ctx context.Context, keys []string) (observed[domain.Counters], error) {
	cmds := make([]*redis.SliceCmd, len(keys))
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, k, FieldReads, FieldLikes, FieldCollects, "_v", "_s", "_g")
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
		if len(vals) != 6 {
			out.seen[k] = ""
			continue
		}
		counts := domain.Counters{Reads: toInt(vals[0]), Likes: toInt(vals[1]), Collects: toInt(vals[2])}
		present, suspect := vals[3] != nil, vals[4] != nil || suspected[k]
		gen, _ := vals[5].(string)
		switch {
		case present && !suspect:
			out.hits[k] = entry[domain.Counters]{v: counts}
		case present:
			if out.stale == nil {
				out.stale = make(map[string]domain.Counters)
			}
			out.stale[k] = counts
			out.seen[k] = gen
		default:
			out.seen[k] = gen
		}
	}
	return out, nil
}

// fill writes loaded hashes, each only if its guard holds (lua/counters_fill.lua), with its TTL:
// one script per hash, in one plain pipeline. (Not MULTI/EXEC: a transaction over many keys is
// refused by a Redis Cluster when they lie in several slots; a pipeline is split by node.)
func (c *Counters) fill(ctx context.Context, counters map[string]entry[domain.Counters], seen map[string]string) error {
	calls := make([]scriptCall, 0, len(counters))
	for k, e := range counters {
		ttl := max(jittered(c.ttl, c.jitter).Milliseconds(), 1)
		n := e.v
		calls = append(calls, scriptCall{key: k, args: []any{ttl, seen[k], n.Reads, n.Likes, n.Collects}})
	}
	if err := runScript(ctx, c.rdb, countersFill, calls); err != nil {
		return fmt.Errorf("counters: fill: %w", err)
	}
	return nil
}

// suspect marks hashes suspect (lua/counters_suspect.lua).
func (c *Counters) suspect(ctx context.Context, keys []string) error {
	c.rt.changing(keys...)
	defer c.rt.changed(keys...)
	calls := make([]scriptCall, len(keys))
	for i, k := range keys {
		calls[i] = scriptCall{key: k}
	}
	return runScript(ctx, c.rdb, countersSuspect, calls)
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
