package repository

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// InteractiveRepository stores likes and counters: PostgreSQL is the truth (a like row per user
// and item, changed in one transaction with the item's counter row), Redis mirrors the counters.
type InteractiveRepository struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	counters *cache.CountersCache
	log      *slog.Logger
	repair   *mirrorRepair
	writes   *counterWrites
}

// NewInteractiveRepository returns the repository. The mirror is shared with the other
// repositories that change counts (collections, reads).
func NewInteractiveRepository(pool *pgxpool.Pool, q dao.Querier, counters *cache.CountersCache, mirror *CounterMirror, log *slog.Logger) *InteractiveRepository {
	return &InteractiveRepository{pool: pool, q: q, counters: counters, log: log, repair: &mirror.repair, writes: &mirror.writes}
}

// CounterMirror is what keeps the Redis counter hashes honest across the repositories that change
// counts (likes, collects, reads), one per process: the count changes under way, so that a
// refill racing one is distrusted, and the hashes to drop once Redis answers again, which the
// counter reads do (InteractiveRepository.Counters).
type CounterMirror struct {
	writes counterWrites
	repair mirrorRepair
}

// NewCounterMirror returns an empty mirror.
func NewCounterMirror() *CounterMirror { return &CounterMirror{} }

// changing records count changes of ids under way, from before their transaction until their
// Redis increment is done; call the returned function then.
func (m *CounterMirror) changing(biz domain.Biz, ids ...int64) (done func()) {
	seen := make(map[int64]bool, len(ids))
	ends := make([]func(), 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			ends = append(ends, m.writes.begin(mirrorItem{biz, id}))
		}
	}
	return func() {
		for _, end := range ends {
			end()
		}
	}
}

// distrust marks the hashes of ids as possibly wrong (their increment failed, or the change
// raced a refill): they are dropped once Redis answers again.
func (m *CounterMirror) distrust(ctx context.Context, log *slog.Logger, biz domain.Biz, ids ...int64) {
	for _, id := range ids {
		if !m.repair.add(biz, id, false) {
			log.WarnContext(ctx, "too many counter hashes to repair; this one stays stale until it expires", "biz", biz, "id", id)
		}
	}
}

// Like turns userID's like of the item on. Only a real change (off or absent → on) moves the
// counter, so concurrent or repeated likes by one user count once.
func (r *InteractiveRepository) Like(ctx context.Context, biz domain.Biz, id, userID int64) error {
	return r.setLike(ctx, biz, id, userID, true)
}

// Unlike turns userID's like off; unliking what is not liked changes nothing.
func (r *InteractiveRepository) Unlike(ctx context.Context, biz domain.Biz, id, userID int64) error {
	return r.setLike(ctx, biz, id, userID, false)
}

func (r *InteractiveRepository) setLike(ctx context.Context, biz domain.Biz, id, userID int64, on bool) error {
	end := r.writes.begin(mirrorItem{biz, id}) // until the hash is incremented, a refill may race it
	var changed bool
	err := inTx(ctx, r.pool, defaultRetry, func(tx *Tx) error {
		var n int64
		var err error
		if on {
			n, err = queries.LikeOn(ctx, tx, dao.LikeOnParams{UserID: userID, Biz: string(biz), BizID: id})
		} else {
			n, err = queries.LikeOff(ctx, tx, dao.LikeOffParams{UserID: userID, Biz: string(biz), BizID: id})
		}
		if err != nil || n == 0 {
			return wrapf(err, "set like of %s %d by %d", biz, id, userID)
		}
		changed = true
		delta := int64(1)
		if !on {
			delta = -1
		}
		return wrapf(queries.InteractiveAddLikes(ctx, tx, dao.InteractiveAddLikesParams{Biz: string(biz), BizID: id, Delta: delta}),
			"count like of %s %d", biz, id)
	})
	if errors.Is(err, ErrCommitUnknown) {
		// The like may have been committed without its increment: once PostgreSQL answers again,
		// drop the hash (not before: while PostgreSQL is down the hash is what serves reads).
		r.repair.add(biz, id, true)
	}
	if err != nil || !changed {
		end()
		return err
	}
	delta := int64(1)
	if !on {
		delta = -1
	}
	// Committed: the hash follows (before the commit a refill would have read the count without
	// this like).
	defer end()
	if _, err := r.counters.Incr(context.WithoutCancel(ctx), biz, id, cache.FieldLikes, delta); err != nil {
		// The increment did not run, or ran and timed out: the hash is no longer to be
		// trusted. It is dropped as soon as Redis answers again, and the next read refills it
		// from PostgreSQL, which is right.
		r.log.WarnContext(ctx, "counter cache update failed", "biz", biz, "id", id, "err", err)
		r.repair.add(biz, id, false)
		return nil
	}
	r.dropDistrusted(ctx, true) // both stores just answered
	return nil
}

// counterWrites tracks the count changes under way in this process (likes, collects, reads), from
// before their transaction until their increment of the counter hash is done, so a read that
// refills a hash can tell whether one raced it.
type counterWrites struct {
	mu        sync.Mutex
	inFlight  map[mirrorItem]int
	began     map[mirrorItem]time.Time // when the latest change of the item began
	lastSweep time.Time
}

// begin records the start of a count change of it and returns the function that records its end.
func (w *counterWrites) begin(it mirrorItem) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inFlight == nil {
		w.inFlight, w.began = make(map[mirrorItem]int), make(map[mirrorItem]time.Time)
	}
	now := time.Now()
	// Forget items idle for a minute (no refill takes that long), sweeping at most every 10 s so
	// that a read batch touching thousands of articles does not scan the map for each.
	if len(w.began) >= 10000 && now.Sub(w.lastSweep) > 10*time.Second {
		w.lastSweep = now
		for k, at := range w.began {
			if w.inFlight[k] == 0 && now.Sub(at) > time.Minute {
				delete(w.began, k)
			}
		}
	}
	w.inFlight[it]++
	w.began[it] = now
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.inFlight[it]--; w.inFlight[it] <= 0 {
			delete(w.inFlight, it)
		}
	}
}

// busy returns the items among ids with a change under way, or begun since since (when not zero).
func (w *counterWrites) busy(biz domain.Biz, ids []int64, since time.Time) map[mirrorItem]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[mirrorItem]bool)
	for _, id := range ids {
		it := mirrorItem{biz, id}
		if w.inFlight[it] > 0 || (!since.IsZero() && !w.began[it].Before(since)) {
			out[it] = true
		}
	}
	return out
}

// mirrorRepair remembers the items whose Redis counter hash may be wrong, until their hash is
// dropped. Without it a hash missed by an increment (Redis down or timing out) or a like whose
// commit outcome is unknown would show a wrong count until the hash expires.
type mirrorRepair struct {
	n        atomic.Int64 // len(items), read without the lock on every counter read
	failedAt atomic.Int64 // unix nanoseconds of the last failed drop: wait a little before the next try
	mu       sync.Mutex
	items    map[mirrorItem]bool // true: drop only once PostgreSQL answers (the hash serves reads until then)
}

type mirrorItem struct {
	biz domain.Biz
	id  int64
}

// maxMirrorRepairs bounds the memory a long Redis outage under many writes can take; items past
// it keep a stale count until their hash expires, as before (and a warning says so).
const maxMirrorRepairs = 100000

func (m *mirrorRepair) add(biz domain.Biz, id int64, afterPostgres bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = make(map[mirrorItem]bool)
	}
	it := mirrorItem{biz, id}
	if _, ok := m.items[it]; !ok && len(m.items) >= maxMirrorRepairs {
		return false
	}
	m.items[it] = m.items[it] || afterPostgres
	m.n.Store(int64(len(m.items)))
	return true
}

// take removes and returns the items that may be dropped now: all when PostgreSQL has just
// answered, else those that only waited for Redis.
func (m *mirrorRepair) take(postgresUp bool) map[mirrorItem]bool {
	if m.n.Load() == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[mirrorItem]bool)
	for it, afterPostgres := range m.items {
		if postgresUp || !afterPostgres {
			out[it] = afterPostgres
			delete(m.items, it)
		}
	}
	m.n.Store(int64(len(m.items)))
	return out
}

// dropDistrusted drops the hashes of distrusted items (see mirrorRepair) and returns those it
// dropped. Call it only right after Redis answered, and with postgresUp only right after
// PostgreSQL did too; what cannot be dropped now is kept for later.
func (r *InteractiveRepository) dropDistrusted(ctx context.Context, postgresUp bool) map[mirrorItem]bool {
	if r.repair.n.Load() == 0 || time.Since(time.Unix(0, r.repair.failedAt.Load())) < 500*time.Millisecond {
		return nil // nothing to drop, or Redis just failed: a read served in process says nothing of it
	}
	items := r.repair.take(postgresUp)
	dropped := make(map[mirrorItem]bool, len(items))
	var failed error
	for it, afterPostgres := range items {
		if failed == nil {
			failed = r.counters.Invalidate(context.WithoutCancel(ctx), it.biz, it.id)
		}
		if failed != nil {
			if !r.repair.add(it.biz, it.id, afterPostgres) {
				r.log.WarnContext(ctx, "too many counter hashes to repair; this one stays stale until it expires", "biz", it.biz, "id", it.id)
			}
			continue
		}
		dropped[it] = true
	}
	if failed != nil {
		r.repair.failedAt.Store(time.Now().UnixNano())
		r.log.WarnContext(ctx, "dropping distrusted counter hashes failed; retrying later", "err", failed)
	}
	return dropped
}

// Counters returns every item's counters: from Redis where cached, the rest with one query (and
// written back). Items never interacted with get zeros. When Redis fails, all come from PostgreSQL.
func (r *InteractiveRepository) Counters(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, error) {
	found, missing, err := r.counters.Get(ctx, biz, ids)
	redisDown := err != nil
	if redisDown {
		r.log.WarnContext(ctx, "counter cache read failed, serving from the database", "err", err)
		found, missing = make(map[int64]domain.Counters, len(ids)), ids
	} else if dropped := r.dropDistrusted(ctx, false); len(dropped) > 0 {
		// Redis answers again (or the in-process tier did; then the drop fails and waits): what
		// was just read of a dropped hash is stale, load it instead.
		for _, id := range ids {
			if _, ok := found[id]; ok && dropped[mirrorItem{biz, id}] {
				delete(found, id)
				missing = append(missing, id)
			}
		}
	}
	if len(missing) == 0 {
		return found, nil
	}
	readAt, writing := time.Now(), r.writes.busy(biz, missing, time.Time{})
	rows, err := r.q.InteractiveGetMany(ctx, r.pool, dao.InteractiveGetManyParams{Biz: string(biz), BizIds: missing})
	if err != nil {
		return nil, wrapf(err, "get counters of %d %s items", len(missing), biz)
	}
	if !redisDown {
		r.dropDistrusted(ctx, true) // both stores just answered
	}
	loaded := make(map[int64]domain.Counters, len(missing))
	for _, id := range missing {
		loaded[id] = domain.Counters{}
	}
	for _, row := range rows {
		loaded[row.BizID] = domain.Counters{Reads: row.ReadCnt, Likes: row.LikeCnt, Collects: row.CollectCnt}
	}
	if !redisDown {
		if err := r.counters.Fill(context.WithoutCancel(ctx), biz, loaded); err != nil {
			r.log.WarnContext(ctx, "counter cache fill failed", "err", err)
		}
		// A like of a filled item that was under way while this read and filled may have found no
		// hash to increment (the fill then holds the count before it) or incremented a fill that
		// already counted it: either way the hash is wrong, so drop it and let the next read fill
		// it again. (Likes served by other processes are not seen here.)
		for it := range r.writes.busy(biz, missing, readAt) {
			writing[it] = true
		}
		for it := range writing {
			r.repair.add(it.biz, it.id, false)
		}
		if len(writing) > 0 {
			r.dropDistrusted(ctx, false)
		}
	}
	for id, c := range loaded {
		found[id] = c
	}
	return found, nil
}

// Liked returns which of ids userID currently likes, in one query.
func (r *InteractiveRepository) Liked(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 || userID == 0 {
		return out, nil
	}
	liked, err := r.q.LikeListLikedAmong(ctx, r.pool, dao.LikeListLikedAmongParams{UserID: userID, Biz: string(biz), BizIds: ids})
	if err != nil {
		return nil, wrapf(err, "list likes of %d", userID)
	}
	for _, id := range liked {
		out[id] = true
	}
	return out, nil
}

// Collected returns which of ids are in any of userID's collections, in one query.
func (r *InteractiveRepository) Collected(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 || userID == 0 || biz != domain.BizArticle {
		return out, nil
	}
	found, err := r.q.CollectionItemCollectedAmong(ctx, r.pool, dao.CollectionItemCollectedAmongParams{OwnerID: userID, ArticleIds: ids})
	if err != nil {
		return nil, wrapf(err, "list collected of %d", userID)
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
