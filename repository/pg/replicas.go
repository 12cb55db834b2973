package pg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// ReplicaPoll is how often the router reads each replica's replayed WAL position and the
// primary's written one.
const ReplicaPoll = 100 * time.Millisecond

// replicaStale is how long a replica whose position could not be read stays in the rotation on
// its last position: no longer than a few missed polls.
const replicaStale = 3 * ReplicaPoll

// WriteMarks keeps, per user, the primary's WAL position after their last write, for as long as
// a replica in the rotation may not have replayed it (cache.WriteMarks: Redis and the process).
type WriteMarks interface {
	Mark(ctx context.Context, userID, position int64) error
	// Position is the user's last mark, 0 when none is kept; an error when it cannot be known.
	Position(ctx context.Context, userID int64) (int64, error)
}

// ReadRouter sends reads that tolerate a little lag to a read replica that has replayed enough,
// and every other read to the primary. "Enough" is, for every reader, all the WAL the primary had
// written MaxLag ago (an anonymous reader never sees data older than that), and for a signed-in
// reader also the position after their own last write (read your writes, on any instance,
// through WriteMarks). A replica whose position is unknown, too old or behind is skipped; a read
// a replica fails is run again on the primary. With no replica every read is the primary's.
//
// Reads of the units of work, auth, sessions, idempotency, the queues, the outbox, rate limits
// and the counters' truth never come here: they use the primary pool directly.
type ReadRouter struct {
	primary  *pgxpool.Pool
	replicas []*replica
	pools    []*pgxpool.Pool // pools[i] is replicas[i]'s
	marks    WriteMarks
	maxLag   time.Duration
	now      func() time.Time
	q        dao.Querier
	log      *slog.Logger
	next     atomic.Uint64 // round robin over the replicas that qualify
	Stats    RouterStats

	mu      sync.Mutex
	written []positionAt // the primary's positions, oldest first, covering MaxLag and a little more
}

// RouterStats counts where the routed reads went.
type RouterStats struct {
	Replica   atomic.Int64 // reads sent to a replica
	Primary   atomic.Int64 // reads sent to the primary: no replica had replayed enough, or the reader wrote
	Fallbacks atomic.Int64 // reads a replica failed, run again on the primary
}

type replica struct {
	name     string
	pool     *pgxpool.Pool
	position atomic.Int64 // replayed WAL, bytes; -1: not a replica
	readAt   atomic.Int64 // unix nanoseconds of the last successful poll; 0: never
}

type positionAt struct {
	at       time.Time
	position int64
}

// Replica is one replica's pool and its name in logs and metrics.
type Replica struct {
	Name string
	Pool *pgxpool.Pool
}

// NewReadRouter routes reads over replicas (none: every read is the primary's). now is the
// clock the lag is measured on (time.Now outside tests).
func NewReadRouter(primary *pgxpool.Pool, replicas []Replica, marks WriteMarks, maxLag time.Duration, now func() time.Time, log *slog.Logger) *ReadRouter {
	r := &ReadRouter{primary: primary, marks: marks, maxLag: maxLag, now: now, q: dao.New(), log: log}
	for _, rp := range replicas {
		r.replicas = append(r.replicas, &replica{name: rp.Name, pool: rp.Pool})
		r.pools = append(r.pools, rp.Pool)
	}
	return r
}

// Enabled reports whether any replica is configured.
func (r *ReadRouter) Enabled() bool { return r != nil && len(r.replicas) > 0 }

// Primary is the primary pool.
func (r *ReadRouter) Primary() *pgxpool.Pool { return r.primary }

// For returns the connection ctx's read runs on: a replica that has replayed what this reader
// must see, or the primary.
func (r *ReadRouter) For(ctx context.Context) dao.DBTX { return r.route(ctx, r.primary, r.pools) }

// ReadsOn is where ctx's read that tolerates a little lag runs: r's choice, or pool when there is
// no router (nil, as in tests of one room).
func ReadsOn(ctx context.Context, r *ReadRouter, pool *pgxpool.Pool) dao.DBTX {
	if r == nil {
		return pool
	}
	return r.For(ctx)
}

// Lane routes reads over other pools on the same servers (pools[i] on the router's replica i,
// primary on the primary), sharing the router's positions, marks and rotation: the search
// pools, whose sessions plan each statement once, are one.
type Lane struct {
	router  *ReadRouter
	primary *pgxpool.Pool
	pools   []*pgxpool.Pool
}

// Lane returns the lane of primary and pools, one pool per replica in the router's order.
func (r *ReadRouter) Lane(primary *pgxpool.Pool, pools []*pgxpool.Pool) *Lane {
	if len(pools) != len(r.replicas) {
		panic(fmt.Sprintf("pg: a lane needs one pool per replica: %d pools, %d replicas", len(pools), len(r.replicas)))
	}
	return &Lane{router: r, primary: primary, pools: pools}
}

// For returns the connection ctx's read runs on, as ReadRouter.For does.
func (l *Lane) For(ctx context.Context) dao.DBTX { return l.router.route(ctx, l.primary, l.pools) }

func (r *ReadRouter) route(ctx context.Context, primary *pgxpool.Pool, pools []*pgxpool.Pool) dao.DBTX {
	if !r.Enabled() {
		return primary
	}
	if i := r.pick(ctx); i >= 0 {
		r.Stats.Replica.Add(1)
		return &replicaConn{replica: r.replicas[i], pool: pools[i], primary: primary, stats: &r.Stats}
	}
	r.Stats.Primary.Add(1)
	return primary
}

// pick is the index of a replica that has replayed what ctx's reader must see; -1 when none has.
func (r *ReadRouter) pick(ctx context.Context) int {
	if domain.PrimaryReadsOnly(ctx) {
		return -1
	}
	need, ok := r.freshFloor()
	if !ok {
		return -1
	}
	// Once per request: a mark made after the request began is another request's write.
	mark, err := domain.ReaderFloor(ctx, func(user int64) (int64, error) { return r.marks.Position(ctx, user) })
	if err != nil {
		return -1 // their last write's position is unknown: only the primary surely has it
	}
	need = max(need, mark)
	now := r.now().UnixNano()
	start := r.next.Add(1)
	for i := range r.replicas {
		at := int((start + uint64(i)) % uint64(len(r.replicas)))
		if rp := r.replicas[at]; rp.position.Load() >= need && now-rp.readAt.Load() <= int64(replicaStale) {
			return at
		}
	}
	return -1
}

// freshFloor is the WAL position every read must have: the primary's position at the oldest
// sample taken within MaxLag (everything committed before it is in it). false when no sample is
// that recent (the primary's position could not be read): then only the primary will do.
func (r *ReadRouter) freshFloor() (int64, bool) {
	oldest := r.now().Add(-r.maxLag)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.written {
		if !s.at.Before(oldest) {
			return s.position, true
		}
	}
	return 0, false
}

// Wrote records that user has just written: their reads from now on, on every instance, need the
// primary's current position. Call it after the write committed and before its answer leaves.
// An error means the mark may be missing elsewhere; the reads of this process still honour it.
func (r *ReadRouter) Wrote(ctx context.Context, userID int64) error {
	if !r.Enabled() || userID == 0 {
		return nil
	}
	pos, err := r.q.WalCurrentPosition(ctx, r.primary)
	if err != nil {
		return Wrapf(err, "read the primary's WAL position")
	}
	return r.marks.Mark(ctx, userID, pos)
}

// Run polls the primary's position and every replica's until ctx ends.
func (r *ReadRouter) Run(ctx context.Context) {
	if !r.Enabled() {
		return
	}
	var wg sync.WaitGroup
	for _, rp := range r.replicas {
		wg.Go(func() { r.pollReplica(ctx, rp) })
	}
	t := time.NewTicker(ReplicaPoll)
	defer t.Stop()
	for {
		r.pollPrimary(ctx)
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-t.C:
		}
	}
}

func (r *ReadRouter) pollPrimary(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, ReplicaPoll)
	defer cancel()
	pos, err := r.q.WalCurrentPosition(pctx, r.primary)
	if err != nil {
		return // no new sample: once the last is older than MaxLag, reads go to the primary
	}
	r.observePrimary(r.now(), pos)
}

// observePrimary keeps a sample of the primary's position, dropping those no read needs any more
// (all but the newest one older than MaxLag).
func (r *ReadRouter) observePrimary(at time.Time, pos int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = append(r.written, positionAt{at: at, position: pos})
	oldest := at.Add(-r.maxLag)
	drop := 0
	for drop+1 < len(r.written) && r.written[drop+1].at.Before(oldest) {
		drop++
	}
	r.written = r.written[drop:]
}

func (r *ReadRouter) pollReplica(ctx context.Context, rp *replica) {
	t := time.NewTicker(ReplicaPoll)
	defer t.Stop()
	failing := false
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		pos, err := r.q.WalReplayedPosition(pctx, rp.pool)
		cancel()
		switch {
		case err == nil:
			rp.position.Store(pos)
			rp.readAt.Store(r.now().UnixNano())
			if failing {
				r.log.Info("read replica answers again", "replica", rp.name)
				failing = false
			}
		case ctx.Err() == nil && !failing:
			r.log.Warn("read replica does not answer; its reads go elsewhere", "replica", rp.name, "err", err)
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// skip takes a replica out of the rotation until its next successful poll (a read on it failed).
func (rp *replica) skip() { rp.readAt.Store(0) }

// replicaConn runs a read on a replica, and again on the primary when the replica fails it
// (unreachable, shut down, a query cancelled by a recovery conflict): the reader never sees a
// replica's failure.
type replicaConn struct {
	replica *replica
	pool    *pgxpool.Pool // on replica
	primary *pgxpool.Pool
	stats   *RouterStats
}

func (c *replicaConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := c.pool.Exec(ctx, sql, args...)
	if c.retry(ctx, err) {
		return c.primary.Exec(ctx, sql, args...)
	}
	return tag, err
}

func (c *replicaConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := c.pool.Query(ctx, sql, args...)
	if c.retry(ctx, err) {
		return c.primary.Query(ctx, sql, args...)
	}
	return rows, err
}

func (c *replicaConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return &replicaRow{conn: c, ctx: ctx, sql: sql, args: args}
}

// retry reports whether a replica's error should send the read to the primary: any error but
// "no rows" while the caller still waits (the primary would give a genuine error again).
func (c *replicaConn) retry(ctx context.Context, err error) bool {
	if err == nil || errors.Is(err, pgx.ErrNoRows) || ctx.Err() != nil {
		return false
	}
	c.replica.skip()
	c.stats.Fallbacks.Add(1)
	return true
}

type replicaRow struct {
	conn *replicaConn
	ctx  context.Context
	sql  string
	args []any
}

func (r *replicaRow) Scan(dest ...any) error {
	err := r.conn.pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	if r.conn.retry(r.ctx, err) {
		return r.conn.primary.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	}
	return err
}

// Lags are each replica's distance behind the primary's newest sampled position, in bytes, by
// replica name; -1 while a replica's position is unknown or too old.
func (r *ReadRouter) Lags() map[string]func() float64 {
	out := make(map[string]func() float64, len(r.replicas))
	for _, rp := range r.replicas {
		out[rp.name] = func() float64 {
			r.mu.Lock()
			newest := int64(-1)
			if n := len(r.written); n > 0 {
				newest = r.written[n-1].position
			}
			r.mu.Unlock()
			pos := rp.position.Load()
			if newest < 0 || pos < 0 || r.now().UnixNano()-rp.readAt.Load() > int64(replicaStale) {
				return -1
			}
			return float64(max(newest-pos, 0))
		}
	}
	return out
}
