package job_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
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

// TestMain silences go-redis's own logger (it reports every failed dial and every command a
// killed consumer's context cut short) unless INKWELL_TEST_LOG=1.
func TestMain(m *testing.M) {
	if os.Getenv("INKWELL_TEST_LOG") != "1" {
		redis.SetLogger(quiet{})
	}
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// testPolicy is long enough that no counter hash expires while a test runs.
var testPolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: 2 * time.Minute, LoadTimeout: 30 * time.Second}

// env is the read pipeline's storage on the real PostgreSQL and Redis: a database of its own, a
// key prefix of its own and the stream under it.
type env struct {
	db       *testenv.DB
	pool     *pgxpool.Pool // the repository's pool (traced when envOpts.Trace)
	stmts    *stmtCounter  // nil unless traced
	rdb      redis.UniversalClient
	stream   string
	counters *cache.Counters
	reads    *repository.ReadRepository
	log      *slog.Logger
}

type envOpts struct {
	Trace bool // count the statements the repository sends
}

func setup(tb testing.TB, o envOpts) *env {
	tb.Helper()
	db := testenv.NewDB(tb)
	r := testenv.NewRedis(tb)
	e := &env{db: db, pool: db.Pool, rdb: r.Client, stream: r.Prefix + "stream:reads", log: testenv.Logger(tb)}
	if o.Trace {
		cfg, err := pgxpool.ParseConfig(db.URL)
		if err != nil {
			tb.Fatal(err)
		}
		e.stmts = &stmtCounter{}
		cfg.ConnConfig.Tracer = e.stmts
		testenv.LimitPool(cfg) // under the tests' shared connection budget
		e.pool, err = pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(e.pool.Close) // before the database is dropped
	}
	e.counters = cache.NewCounters(r.Client, cache.Keyspace(r.Prefix), testPolicy, e.log)
	e.reads = repository.NewReadRepository(e.pool, dao.New(), e.counters)
	return e
}

// articles inserts n published articles (and their author) and fills their counter hashes with
// zeros, so that applied reads go through the increment script.
func (e *env) articles(tb testing.TB, n int) []int64 {
	tb.Helper()
	ctx := context.Background()
	name := "author_" + testenv.RandomID(5)
	var author int64
	if err := e.db.Pool.QueryRow(ctx, `INSERT INTO users (email, username, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
		name+"@example.com", name).Scan(&author); err != nil {
		tb.Fatalf("insert user: %v", err)
	}
	ids := make([]int64, n)
	fill := make(map[int64]domain.Counters, n)
	for i := range ids {
		slug := "article-" + testenv.RandomID(6)
		if err := e.db.Pool.QueryRow(ctx, `INSERT INTO articles (slug, author_id, title, description, body, status)
			VALUES ($1, $2, $1, 'd', 'b', 'published') RETURNING id`, slug, author).Scan(&ids[i]); err != nil {
			tb.Fatalf("insert article: %v", err)
		}
		fill[ids[i]] = domain.Counters{}
	}
	if err := e.counters.Fill(ctx, domain.BizArticle, fill); err != nil {
		tb.Fatal(err)
	}
	return ids
}

// pgReads is read_cnt per article in PostgreSQL.
func (e *env) pgReads(tb testing.TB, ids []int64) map[int64]int64 {
	tb.Helper()
	rows, err := e.db.Pool.Query(context.Background(),
		`SELECT biz_id, read_cnt FROM interactives WHERE biz = 'article' AND biz_id = ANY($1)`, ids)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]int64, error) {
		var v [2]int64
		err := r.Scan(&v[0], &v[1])
		return v, err
	})
	if err != nil {
		tb.Fatal(err)
	}
	m := make(map[int64]int64, len(ids))
	for _, v := range out {
		m[v[0]] = v[1]
	}
	return m
}

// pgTotal is the sum of read_cnt over every article.
func (e *env) pgTotal(tb testing.TB) int64 {
	tb.Helper()
	var n int64
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT coalesce(sum(read_cnt), 0) FROM interactives WHERE biz = 'article'`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// redisReads is read_cnt per article in the counter hashes (missing hashes are absent).
func (e *env) redisReads(tb testing.TB, ids []int64) map[int64]int64 {
	tb.Helper()
	m := make(map[int64]int64, len(ids))
	for _, id := range ids {
		s, err := e.rdb.HGet(context.Background(), e.counters.Key(domain.BizArticle, id), cache.FieldReads).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		if m[id], err = strconv.ParseInt(s, 10, 64); err != nil {
			tb.Fatalf("read_cnt %q: %v", s, err)
		}
	}
	return m
}

// addEvents writes evs to the stream in pipelined chunks, as the publisher would.
func (e *env) addEvents(tb testing.TB, evs []domain.ReadEvent) {
	tb.Helper()
	for start := 0; start < len(evs); start += 1000 {
		_, err := e.rdb.Pipelined(context.Background(), func(p redis.Pipeliner) error {
			for _, ev := range evs[start:min(start+1000, len(evs))] {
				p.XAdd(context.Background(), &redis.XAddArgs{Stream: e.stream, Values: values(ev)})
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("XADD: %v", err)
		}
	}
}

// values is an event as the publisher writes it to the stream.
func values(ev domain.ReadEvent) map[string]any {
	return map[string]any{
		"id": ev.ID, "article": strconv.FormatInt(ev.ArticleID, 10),
		"user": strconv.FormatInt(ev.UserID, 10), "at": strconv.FormatInt(ev.At.UnixMicro(), 10),
	}
}

// readEvents makes n events spread round-robin over articles.
func readEvents(n int, articles []int64) []domain.ReadEvent {
	evs := make([]domain.ReadEvent, n)
	now := time.Now().UTC().Truncate(time.Microsecond)
	for i := range evs {
		evs[i] = domain.ReadEvent{ID: domain.NewEventID(), ArticleID: articles[i%len(articles)], At: now}
	}
	return evs
}

// stmtCounter is a pgx.QueryTracer counting statements.
type stmtCounter struct {
	mu sync.Mutex
	n  int64
}

func (c *stmtCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return ctx
}

func (c *stmtCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *stmtCounter) count() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
