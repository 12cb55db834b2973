package repository_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// The read-event repository on the real PostgreSQL and Redis. Each top-level test has a database;
// its subtests share it, each with articles of its own, its own Redis key prefix and its own pool,
// whose statements a tracer counts.

type readsEnv struct {
	pool     *pgxpool.Pool
	stmts    *readsTracer
	rdb      *testenv.Redis
	counters *cache.Counters
	repo     *repository.ReadRepository
}

type readsOpts struct {
	DeadRedis bool // the counters cache talks to a port where nothing listens
}

func readsSetup(t *testing.T, db *testenv.DB, o readsOpts) *readsEnv {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	tracer := &readsTracer{}
	cfg.ConnConfig.Tracer = tracer
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // before the database is dropped
	r := testenv.NewRedis(t)
	rdb := r.Client
	if o.DeadRedis {
		rdb = testenv.DeadRedis(t)
	}
	counters := cache.NewCounters(rdb, cache.Keyspace(r.Prefix), testPolicy, testenv.Logger(t))
	return &readsEnv{
		pool: pool, stmts: tracer, rdb: r, counters: counters,
		repo: repository.NewReadRepository(pool, dao.New(), counters),
	}
}

// readsTracer is a pgx.QueryTracer counting the statements sent through its pool.
type readsTracer struct {
	mu   sync.Mutex
	sqls []string
}

func (c *readsTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	name, _, _ := strings.Cut(strings.TrimPrefix(d.SQL, "-- name: "), "\n")
	c.sqls = append(c.sqls, name)
	return ctx
}

func (c *readsTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// during returns the statements fn sent.
func (c *readsTracer) during(fn func()) []string {
	c.mu.Lock()
	c.sqls = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sqls...)
}

// exec runs SQL straight on the database (not traced).
func readsExec(t *testing.T, db *testenv.DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// readsUser inserts a user and returns its id.
func readsUser(t *testing.T, db *testenv.DB) int64 {
	t.Helper()
	name := "reader_" + testenv.RandomID(5)
	var id int64
	err := db.Pool.QueryRow(context.Background(),
		`INSERT INTO users (email, username, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
		name+"@example.com", name).Scan(&id)
	if err != nil {
		t.Fatalf("insert user: %v", err)
	}
	return id
}

// readsArticles inserts n published articles by a new author and returns their ids.
func readsArticles(t *testing.T, db *testenv.DB, n int) []int64 {
	t.Helper()
	author := readsUser(t, db)
	ids := make([]int64, n)
	for i := range ids {
		slug := "read-me-" + testenv.RandomID(6)
		err := db.Pool.QueryRow(context.Background(),
			`INSERT INTO articles (slug, author_id, title, description, body, status)
			 VALUES ($1, $2, $1, 'd', 'b', 'published') RETURNING id`, slug, author).Scan(&ids[i])
		if err != nil {
			t.Fatalf("insert article: %v", err)
		}
	}
	return ids
}

// readCounts is read_cnt per article, straight from PostgreSQL (articles without a row: 0).
func readCounts(t *testing.T, db *testenv.DB, ids []int64) map[int64]int64 {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(),
		`SELECT biz_id, read_cnt FROM interactives WHERE biz = 'article' AND biz_id = ANY($1)`, ids)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int64]int64, len(ids))
	for _, id := range ids {
		out[id] = 0
	}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// setReads sets the articles' read counts in PostgreSQL and fills their Redis hashes to match, so
// that applied batches go through the increment script.
func (e *readsEnv) setReads(t *testing.T, db *testenv.DB, base map[int64]int64) {
	t.Helper()
	fill := make(map[int64]domain.Counters, len(base))
	for id, n := range base {
		readsExec(t, db, `INSERT INTO interactives (biz, biz_id, read_cnt) VALUES ('article', $1, $2)
			ON CONFLICT (biz, biz_id, shard) DO UPDATE SET read_cnt = EXCLUDED.read_cnt`, id, n)
		fill[id] = domain.Counters{Reads: n}
	}
	if err := e.counters.Fill(context.Background(), domain.BizArticle, fill); err != nil {
		t.Fatal(err)
	}
}

// cachedReads is read_cnt per article from the Redis hashes; missing hashes are absent.
func (e *readsEnv) cachedReads(t *testing.T, ids []int64) map[int64]int64 {
	t.Helper()
	out := make(map[int64]int64, len(ids))
	for _, id := range ids {
		s, err := e.rdb.Client.HGet(context.Background(), e.counters.Key(domain.BizArticle, id), cache.FieldReads).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if out[id], err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("read_cnt %q: %v", s, err)
		}
	}
	return out
}

// readsBatch makes read events: Counts[i] of them for Articles[i], in a shuffled order.
type readsBatch struct {
	Articles []int64
	Counts   []int
	UserID   int64
	Seed     uint64
}

func (b readsBatch) events() []domain.ReadEvent {
	var evs []domain.ReadEvent
	at := time.Now().UTC().Truncate(time.Microsecond)
	for i, a := range b.Articles {
		for range b.Counts[i] {
			evs = append(evs, domain.ReadEvent{ID: domain.NewEventID(), ArticleID: a, UserID: b.UserID, At: at})
		}
	}
	r := rand.New(rand.NewPCG(b.Seed, 1))
	r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	return evs
}

// plus returns base with counts added per article.
func plus(base map[int64]int64, ids []int64, counts []int) map[int64]int64 {
	out := make(map[int64]int64, len(base))
	for id, n := range base {
		out[id] = n
	}
	for i, id := range ids {
		out[id] += int64(counts[i])
	}
	return out
}

func checkReads(t *testing.T, where string, got, want map[int64]int64) {
	t.Helper()
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("%s: article %d has no read count, want %d", where, id, w)
		} else if g != w {
			t.Errorf("%s: article %d read_cnt = %d, want %d", where, id, g, w)
		}
	}
}

func (e *readsEnv) apply(t *testing.T, evs []domain.ReadEvent) (applied int64, stmts []string) {
	t.Helper()
	var err error
	stmts = e.stmts.during(func() { applied, err = e.repo.ApplyReads(t.Context(), "read-count", evs) })
	if err != nil {
		t.Fatalf("ApplyReads(%d events): %v", len(evs), err)
	}
	return applied, stmts
}

func checkOneStatement(t *testing.T, stmts []string) {
	t.Helper()
	if len(stmts) != 1 || stmts[0] != "ReadEventsApply :many" {
		t.Errorf("statements = %q, want exactly one (ReadEventsApply)", stmts)
	}
}

func TestReadRepository_ApplyReads(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("1,000 events over 10 articles: exact sums in PostgreSQL and Redis, once each, one statement", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 10)
		base := make(map[int64]int64)
		for i, id := range ids {
			base[id] = int64(7 * i) // the first starts from zero
		}
		e.setReads(t, db, base)
		counts := []int{1, 10, 50, 100, 150, 200, 250, 139, 99, 1} // 1,000 in all
		evs := readsBatch{Articles: ids, Counts: counts, Seed: 1}.events()

		n, stmts := e.apply(t, evs)
		if n != 1000 {
			t.Errorf("ApplyReads = %d, want 1000", n)
		}
		checkOneStatement(t, stmts)
		want := plus(base, ids, counts)
		checkReads(t, "PostgreSQL", readCounts(t, db, ids), want)
		checkReads(t, "Redis", e.cachedReads(t, ids), want)

		// The same batch again (a redelivery): nothing changes.
		n, stmts = e.apply(t, evs)
		if n != 0 {
			t.Errorf("ApplyReads of the same batch again = %d, want 0", n)
		}
		checkOneStatement(t, stmts)
		checkReads(t, "PostgreSQL after the replay", readCounts(t, db, ids), want)
		checkReads(t, "Redis after the replay", e.cachedReads(t, ids), want)

		// Old and new events mixed: only the new ones count.
		fresh := []int{3, 0, 5, 0, 7, 0, 0, 0, 0, 11}
		mixed := append(readsBatch{Articles: ids, Counts: fresh, Seed: 2}.events(), evs[100:600]...)
		rand.New(rand.NewPCG(3, 3)).Shuffle(len(mixed), func(i, j int) { mixed[i], mixed[j] = mixed[j], mixed[i] })
		n, stmts = e.apply(t, mixed)
		if n != 26 {
			t.Errorf("ApplyReads of 26 new and 500 old events = %d, want 26", n)
		}
		checkOneStatement(t, stmts)
		want = plus(want, ids, fresh)
		checkReads(t, "PostgreSQL after the mixed batch", readCounts(t, db, ids), want)
		checkReads(t, "Redis after the mixed batch", e.cachedReads(t, ids), want)
	})

	t.Run("an event twice in one batch counts once", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 2)
		e.setReads(t, db, map[int64]int64{ids[0]: 0, ids[1]: 0})
		evs := readsBatch{Articles: ids, Counts: []int{3, 2}}.events()
		evs = append(evs, evs[0], evs[0], evs[4]) // e.g. a pipeline the client retried wrote them twice
		n, _ := e.apply(t, evs)
		if n != 5 {
			t.Errorf("ApplyReads = %d, want 5 (5 distinct events)", n)
		}
		want := map[int64]int64{ids[0]: 3, ids[1]: 2}
		checkReads(t, "PostgreSQL", readCounts(t, db, ids), want)
		checkReads(t, "Redis", e.cachedReads(t, ids), want)
	})

	t.Run("an aggregated batch counts its totals once, however often it is delivered", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 3)
		e.setReads(t, db, map[int64]int64{ids[0]: 10, ids[1]: 0, ids[2]: 0})
		// One entry of the aggregator: one id, one event per article with its total.
		batch := []domain.ReadEvent{{ID: "batch-a", ArticleID: ids[0], Count: 500}, {ID: "batch-a", ArticleID: ids[1], Count: 3}}
		single := domain.ReadEvent{ID: domain.NewEventID(), ArticleID: ids[2], UserID: 0, At: time.Now()}
		n, stmts := e.apply(t, append(batch, single))
		if n != 504 {
			t.Errorf("ApplyReads = %d, want 504", n)
		}
		checkOneStatement(t, stmts)
		want := map[int64]int64{ids[0]: 510, ids[1]: 3, ids[2]: 1}
		checkReads(t, "PostgreSQL", readCounts(t, db, ids), want)
		checkReads(t, "Redis", e.cachedReads(t, ids), want)

		// Delivered again (a reclaim), twice within one batch (a retried XADD), and beside a new
		// batch: only the new batch counts.
		next := []domain.ReadEvent{{ID: "batch-b", ArticleID: ids[1], Count: 7}}
		n, _ = e.apply(t, append(append(append([]domain.ReadEvent{}, batch...), batch...), next...))
		if n != 7 {
			t.Errorf("ApplyReads of a replayed batch and a new one = %d, want 7", n)
		}
		want[ids[1]] += 7
		checkReads(t, "PostgreSQL after the replay", readCounts(t, db, ids), want)
		checkReads(t, "Redis after the replay", e.cachedReads(t, ids), want)
	})

	t.Run("events for deleted or nonexistent articles are ignored", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 2)
		live, deleted, missing := ids[0], ids[1], int64(1)<<40
		e.setReads(t, db, map[int64]int64{live: 0, deleted: 0})
		readsExec(t, db, `DELETE FROM articles WHERE id = $1`, deleted)
		evs := readsBatch{Articles: []int64{live, deleted, missing}, Counts: []int{5, 3, 2}, Seed: 4}.events()
		n, stmts := e.apply(t, evs)
		if n != 5 {
			t.Errorf("ApplyReads = %d, want 5 (only the live article's)", n)
		}
		checkOneStatement(t, stmts)
		checkReads(t, "PostgreSQL", readCounts(t, db, []int64{live}), map[int64]int64{live: 5})
		var rows int64
		if err := db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM interactives WHERE biz_id = $1 AND read_cnt > 0`, missing).Scan(&rows); err != nil || rows != 0 {
			t.Errorf("a nonexistent article got a counter row (%d, %v)", rows, err)
		}
		checkReads(t, "Redis", e.cachedReads(t, []int64{live, deleted}), map[int64]int64{live: 5, deleted: 0})
		if got := e.cachedReads(t, []int64{missing}); len(got) != 0 {
			t.Errorf("a nonexistent article got a counter hash: %v", got)
		}
		if n, _ := e.apply(t, evs); n != 0 {
			t.Errorf("replay = %d, want 0", n)
		}
	})

	t.Run("an article without a Redis hash gets its whole row", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 1)
		n, _ := e.apply(t, readsBatch{Articles: ids, Counts: []int{4}}.events())
		if n != 4 {
			t.Errorf("ApplyReads = %d, want 4", n)
		}
		checkReads(t, "PostgreSQL", readCounts(t, db, ids), map[int64]int64{ids[0]: 4})
		checkReads(t, "Redis", e.cachedReads(t, ids), map[int64]int64{ids[0]: 4})
	})

	t.Run("Redis down: PostgreSQL still counts and the batch succeeds", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{DeadRedis: true})
		ids := readsArticles(t, db, 2)
		n, stmts := e.apply(t, readsBatch{Articles: ids, Counts: []int{2, 3}}.events())
		if n != 5 {
			t.Errorf("ApplyReads = %d, want 5", n)
		}
		checkOneStatement(t, stmts)
		checkReads(t, "PostgreSQL", readCounts(t, db, ids), map[int64]int64{ids[0]: 2, ids[1]: 3})
	})

	t.Run("an empty batch sends nothing", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		if n, stmts := e.apply(t, nil); n != 0 || len(stmts) != 0 {
			t.Errorf("ApplyReads(nil) = %d with statements %q, want 0 and none", n, stmts)
		}
	})

	t.Run("one statement per batch, whatever its size", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 50)
		for _, size := range []int{1, 10, 100, 1000, 5000} {
			counts := make([]int, len(ids))
			for i := range size {
				counts[i%len(ids)]++
			}
			n, stmts := e.apply(t, readsBatch{Articles: ids, Counts: counts}.events())
			if n != int64(size) {
				t.Errorf("batch of %d: ApplyReads = %d", size, n)
			}
			if len(stmts) != 1 {
				t.Errorf("batch of %d: %d statements %q, want 1", size, len(stmts), stmts)
			}
		}
	})

	t.Run("concurrent batches: each event counted once, no deadlock", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 300)
		base := make(map[int64]int64)
		for _, id := range ids {
			base[id] = 0
		}
		e.setReads(t, db, base)
		want := base
		// Each round, four consumers apply batches over different but overlapping sets of the
		// same articles at once (so each batch's counter rows come in a different hash order),
		// and a fifth applies the first one's batch again (a reclaim racing the consumer it took
		// over from).
		const rounds, workers = 12, 4
		var wantTotal, total int64
		for round := range rounds {
			batches := make([][]domain.ReadEvent, workers, workers+1)
			for w := range batches {
				var arts []int64
				var counts []int
				for i, id := range ids {
					if (i*(w+3)+round)%(w+2) != 0 {
						arts = append(arts, id)
						counts = append(counts, 1+(i+w)%3)
					}
				}
				batches[w] = readsBatch{Articles: arts, Counts: counts, Seed: uint64(round*10 + w)}.events()
				want = plus(want, arts, counts)
				wantTotal += int64(len(batches[w]))
			}
			batches = append(batches, batches[0])
			errs := make([]error, len(batches))
			applied := make([]int64, len(batches))
			start := make(chan struct{})
			var wg sync.WaitGroup
			for w := range batches {
				wg.Go(func() {
					<-start
					applied[w], errs[w] = e.repo.ApplyReads(t.Context(), "read-count", batches[w])
				})
			}
			close(start)
			wg.Wait()
			for w, err := range errs {
				if err != nil {
					t.Errorf("round %d, batch %d: %v", round, w, err)
				}
				total += applied[w]
			}
		}
		if total != wantTotal {
			t.Errorf("applied %d in all, want %d (each replayed batch once)", total, wantTotal)
		}
		checkReads(t, "PostgreSQL", readCounts(t, db, ids), want)
		checkReads(t, "Redis", e.cachedReads(t, ids), want)
	})

	t.Run("a batch cancelled while its statement runs still gets PostgreSQL and Redis right", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		ids := readsArticles(t, db, 1)
		e.setReads(t, db, map[int64]int64{ids[0]: 0})
		evs := readsBatch{Articles: ids, Counts: []int{100}}.events()

		// Hold the article's counter row, so the batch's statement is sent and then waits on it.
		locker, err := db.Pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = locker.Rollback(context.Background()) }()
		if _, err := locker.Exec(t.Context(), `SELECT 1 FROM interactives WHERE biz = 'article' AND biz_id = $1 FOR UPDATE`, ids[0]); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := e.repo.ApplyReads(ctx, "read-count", evs)
			done <- err
		}()
		waitForLockWait(t, db, "ReadEventsApply")
		// The consumer is stopped (its context cancelled) while the statement waits; then the
		// statement can go on. Whatever ApplyReads says, the outcome must be consistent.
		cancel()
		if err := locker.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := testenv.Recv(t, done, "ApplyReads to return"); err != nil {
			t.Logf("cancelled batch: %v; the retry runs it again", err)
			if _, err := e.repo.ApplyReads(t.Context(), "read-count", evs); err != nil {
				t.Fatal(err)
			}
		}
		checkReads(t, "PostgreSQL", readCounts(t, db, ids), map[int64]int64{ids[0]: 100})
		if got, ok := e.cachedReads(t, ids)[ids[0]]; ok && got != 100 {
			t.Errorf("Redis read_cnt = %d, PostgreSQL 100: the increment of a batch committed under a "+
				"cancelled context was lost, and the retry found its events already in the inbox", got)
		}
	})
}

// The one window a cancelled context can still hurt: PostgreSQL has committed the batch but its
// answer has not reached the client. Were the statement tied to the consumer's context, ApplyReads
// would fail without updating Redis, and the retry would find every event in the inbox: the
// hashes would stay behind until they expire. A proxy holds PostgreSQL's answer to make the window
// as wide as needed.
func TestReadRepository_ApplyReads_CancelledAfterCommit(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	proxy := newHoldProxy(t, db)
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = proxy.host, proxy.port
	cfg.MaxConns = 1       // one connection, whose statement is prepared before the answer is held
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r := testenv.NewRedis(t)
	counters := cache.NewCounters(r.Client, cache.Keyspace(r.Prefix), testPolicy, testenv.Logger(t))
	e := &readsEnv{pool: pool, rdb: r, counters: counters, repo: repository.NewReadRepository(pool, dao.New(), counters)}
	ids := readsArticles(t, db, 1)
	e.setReads(t, db, map[int64]int64{ids[0]: 0})
	if _, err := e.repo.ApplyReads(t.Context(), "read-count", readsBatch{Articles: ids, Counts: []int{1}}.events()); err != nil {
		t.Fatal(err) // prepares the statement on the pool's connection
	}

	evs := readsBatch{Articles: ids, Counts: []int{100}}.events()
	proxy.hold()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.repo.ApplyReads(ctx, "read-count", evs)
		done <- err
	}()
	testenv.WaitUntil(t, "PostgreSQL commits the batch", func() bool { return readCounts(t, db, ids)[ids[0]] == 101 })
	cancel() // the consumer is stopped before the answer arrives
	proxy.release()
	if err := testenv.Recv(t, done, "ApplyReads to return"); err != nil {
		t.Logf("cancelled batch: %v; the retry runs it again", err)
		if _, err := e.repo.ApplyReads(t.Context(), "read-count", evs); err != nil {
			t.Fatal(err)
		}
	}
	checkReads(t, "PostgreSQL", readCounts(t, db, ids), map[int64]int64{ids[0]: 101})
	checkReads(t, "Redis", e.cachedReads(t, ids), map[int64]int64{ids[0]: 101})
}

// holdProxy forwards TCP between pgx and PostgreSQL; while held, PostgreSQL's answers wait in it.
type holdProxy struct {
	host string
	port uint16
	mu   sync.Mutex
	cond *sync.Cond
	held bool
}

func newHoldProxy(t *testing.T, db *testenv.DB) *holdProxy {
	t.Helper()
	cfg, err := pgx.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{host: "127.0.0.1", port: uint16(ln.Addr().(*net.TCPAddr).Port)}
	p.cond = sync.NewCond(&p.mu)
	var conns sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		p.release()
		conns.Wait()
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				_ = client.Close()
				continue
			}
			closeBoth := func() { _ = client.Close(); _ = server.Close() }
			conns.Go(func() {
				defer closeBoth()
				_, _ = io.Copy(server, client)
			})
			conns.Go(func() {
				defer closeBoth()
				buf := make([]byte, 32<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						p.mu.Lock()
						for p.held {
							p.cond.Wait()
						}
						p.mu.Unlock()
						if _, werr := client.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	}()
	return p
}

func (p *holdProxy) hold() {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
}

func (p *holdProxy) release() {
	p.mu.Lock()
	p.held = false
	p.mu.Unlock()
	p.cond.Broadcast()
}

// waitForLockWait polls pg_stat_activity until a statement whose text contains marker waits on a
// lock in db.
func waitForLockWait(t *testing.T, db *testenv.DB, marker string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int64
		err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND wait_event_type = 'Lock' AND strpos(query, $2) > 0`, db.Name, marker).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after 20s waiting for %s to wait on a lock", marker)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestReadRepository_History(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	ev := func(user, article int64, when time.Time) domain.ReadEvent {
		return domain.ReadEvent{ID: domain.NewEventID(), ArticleID: article, UserID: user, At: when}
	}
	history := func(t *testing.T, e *readsEnv, user int64, after *domain.Cursor, limit int) []domain.HistoryEntry {
		t.Helper()
		h, err := e.repo.History(t.Context(), user, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	applyHistory := func(t *testing.T, e *readsEnv, evs ...domain.ReadEvent) []string {
		t.Helper()
		var err error
		stmts := e.stmts.during(func() { err = e.repo.ApplyHistory(t.Context(), evs) })
		if err != nil {
			t.Fatalf("ApplyHistory: %v", err)
		}
		return stmts
	}
	he := func(article int64, when time.Time) domain.HistoryEntry {
		return domain.HistoryEntry{ArticleID: article, ReadAt: when}
	}
	sameHistory := func(t *testing.T, got, want []domain.HistoryEntry) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("history = %v, want %v", got, want)
		}
		for i := range got {
			if got[i].ArticleID != want[i].ArticleID || !got[i].ReadAt.Equal(want[i].ReadAt) {
				t.Fatalf("history[%d] = %v, want %v (all: %v)", i, got[i], want[i], got)
			}
		}
	}

	t.Run("upserts the last read of each article, newest first, in one statement", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		u := readsUser(t, db)
		a := readsArticles(t, db, 3)
		stmts := applyHistory(t, e, ev(u, a[0], at(1)), ev(u, a[1], at(2)), ev(u, a[0], at(3)), ev(u, a[2], at(0)))
		if len(stmts) != 1 {
			t.Errorf("statements = %q, want one", stmts)
		}
		sameHistory(t, history(t, e, u, nil, 10), []domain.HistoryEntry{he(a[0], at(3)), he(a[1], at(2)), he(a[2], at(0))})
		applyHistory(t, e, ev(u, a[2], at(10)))
		sameHistory(t, history(t, e, u, nil, 10), []domain.HistoryEntry{he(a[2], at(10)), he(a[0], at(3)), he(a[1], at(2))})
	})

	t.Run("replayed or out-of-order batches keep the newest time", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		u := readsUser(t, db)
		a := readsArticles(t, db, 2)
		newer := []domain.ReadEvent{ev(u, a[0], at(50)), ev(u, a[1], at(40))}
		older := []domain.ReadEvent{ev(u, a[0], at(5)), ev(u, a[1], at(45))}
		applyHistory(t, e, newer...)
		applyHistory(t, e, older...) // delivered late: only a[1]'s is newer
		applyHistory(t, e, newer...) // replayed
		sameHistory(t, history(t, e, u, nil, 10), []domain.HistoryEntry{he(a[0], at(50)), he(a[1], at(45))})
	})

	t.Run("anonymous reads are ignored", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		u := readsUser(t, db)
		a := readsArticles(t, db, 2)
		if stmts := applyHistory(t, e, ev(0, a[0], at(1)), ev(0, a[1], at(2))); len(stmts) != 0 {
			t.Errorf("an all-anonymous batch sent %q, want nothing", stmts)
		}
		applyHistory(t, e, ev(0, a[0], at(3)), ev(u, a[1], at(4)))
		sameHistory(t, history(t, e, u, nil, 10), []domain.HistoryEntry{he(a[1], at(4))})
		var n int64
		if err := db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM reading_history WHERE user_id = 0`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d history rows for user 0 (%v)", n, err)
		}
	})

	t.Run("unknown readers and articles are ignored, not an error", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		u := readsUser(t, db)
		a := readsArticles(t, db, 1)
		applyHistory(t, e, ev(u, 1<<40, at(1)), ev(1<<40, a[0], at(2)), ev(u, a[0], at(3)))
		sameHistory(t, history(t, e, u, nil, 10), []domain.HistoryEntry{he(a[0], at(3))})
	})

	t.Run("cursor paging walks the whole history, newest first, ties by article id", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		u, other := readsUser(t, db), readsUser(t, db)
		a := readsArticles(t, db, 25)
		var evs []domain.ReadEvent
		for i, id := range a {
			evs = append(evs, ev(u, id, at(i/2)), ev(other, id, at(100))) // pairs share a time
		}
		applyHistory(t, e, evs...)
		var want []domain.HistoryEntry
		for i := len(a) - 1; i >= 0; i-- {
			want = append(want, domain.HistoryEntry{ArticleID: a[i], ReadAt: at(i / 2)})
		}
		var got []domain.HistoryEntry
		var after *domain.Cursor
		var pages []int
		for range 10 {
			page := history(t, e, u, after, 10)
			pages = append(pages, len(page))
			got = append(got, page...)
			if len(page) < 10 {
				break
			}
			last := page[len(page)-1]
			after = &domain.Cursor{CreatedAt: last.ReadAt, ID: last.ArticleID}
		}
		if fmt.Sprint(pages) != "[10 10 5]" {
			t.Errorf("page sizes = %v, want [10 10 5]", pages)
		}
		sameHistory(t, got, want)
	})

	t.Run("no history: an empty list", func(t *testing.T) {
		t.Parallel()
		e := readsSetup(t, db, readsOpts{})
		if h := history(t, e, readsUser(t, db), nil, 10); len(h) != 0 {
			t.Fatalf("history = %v, want none", h)
		}
	})
}
