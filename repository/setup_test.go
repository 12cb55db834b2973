package repository_test

import (
	"context"
	"errors"
	"html"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
)

// These tests run against the real PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL). Each
// top-level test migrates a database of its own; its subtests share it, each with its own Redis key
// prefix, cache and counting querier, and with users whose names no other subtest uses.

// testPolicy is long enough that nothing expires while a test runs.
var testPolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: 2 * time.Minute, LoadTimeout: 30 * time.Second}

type env struct {
	pool    *pgxpool.Pool
	rdb     redis.UniversalClient // the live Redis, to look at what the cache wrote
	ks      cache.Keyspace
	cache   *cache.UserCache
	q       *countingQuerier
	users   *repository.UserRepository
	follows *repository.FollowRepository

	artCache *cache.ArticleCache
	pages    *cache.AuthorPageCache
	counters *cache.Counters // shared by the repositories that change counts
	viewers  *cache.ViewerState
	articles *repository.ArticleRepository
	inter    *repository.InteractiveRepository
	comments *repository.CommentRepository
}

type envOpts struct {
	Policy    cache.Policy   // zero: testPolicy
	DeadRedis bool           // the cache talks to a port where nothing listens
	Pool      *pgxpool.Pool  // nil: the database's own pool (querycount_test passes a traced one)
	RedisHook redis.Hook     // installed on a client of the caches' own (to inject faults)
	Reads     *pg.ReadRouter // the repositories' read routing (replica_cache_test, replica_rooms_test); nil: the pool
}

func setup(t testing.TB, db *testenv.DB, o envOpts) *env {
	t.Helper()
	if o.Policy == (cache.Policy{}) {
		o.Policy = testPolicy
	}
	r := testenv.NewRedis(t)
	cacheRDB := r.Client
	if o.DeadRedis {
		cacheRDB = testenv.DeadRedis(t)
	}
	if o.RedisHook != nil {
		cacheRDB = testenv.NewRedisClient(t, nil)
		cacheRDB.AddHook(o.RedisHook)
	}
	pool := db.Pool
	if o.Pool != nil {
		pool = o.Pool
	}
	log := testenv.Logger(t)
	ks := cache.Keyspace(r.Prefix)
	uc := cache.NewUserCache(cacheRDB, ks, o.Policy, log)
	q := &countingQuerier{Querier: dao.New()}
	viewers := cache.NewViewerState(cacheRDB, ks, o.Policy, log)
	lists := cache.NewListPageCache(cacheRDB, ks, o.Policy, log)
	e := &env{
		pool:     pool,
		rdb:      r.Client,
		ks:       ks,
		cache:    uc,
		q:        q,
		users:    repository.NewUserRepository(pool, q, uc, log, o.Reads),
		follows:  repository.NewFollowRepository(pool, dao.New(), viewers, lists, log),
		artCache: cache.NewArticleCache(cacheRDB, ks, o.Policy, nil, log),
		pages:    cache.NewAuthorPageCache(cacheRDB, ks, o.Policy),
		counters: cache.NewCounters(cacheRDB, ks, o.Policy, log),
		viewers:  viewers,
	}
	e.articles = repository.NewArticleRepository(pool, q, e.artCache, e.pages, lists, cache.NewTagsCache(cacheRDB, ks, o.Policy, log), search.Language("english"), log, o.Reads)
	e.inter = repository.NewInteractiveRepository(pool, q, e.counters, viewers)
	e.comments = repository.NewCommentRepository(pool, q, o.Reads)
	return e
}

func (e *env) idKey(id int64) string { return e.ks.Key("user", "id", strconv.FormatInt(id, 10)) }

func (e *env) nameKey(name string) string { return e.ks.Key("user", "name", strings.ToLower(name)) }

// exists reports whether key holds a cache entry that reads can use: a value or null marker (not
// an invalidation's tombstone), or a hash holding counts or pages (not bookkeeping alone: fields
// starting with "_" are the caches' fill guards).
func (e *env) exists(t *testing.T, key string) bool {
	t.Helper()
	ctx := context.Background()
	typ, err := e.rdb.Type(ctx, key).Result()
	if err != nil {
		t.Fatalf("TYPE %s: %v", key, err)
	}
	switch typ {
	case "none":
		return false
	case "string":
		raw, err := e.rdb.Get(ctx, key).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET %s: %v", key, err)
		}
		return err == nil && !strings.HasPrefix(raw, "\x01")
	case "hash":
		fields, err := e.rdb.HKeys(ctx, key).Result()
		if err != nil {
			t.Fatalf("HKEYS %s: %v", key, err)
		}
		for _, f := range fields {
			if f == "_ver" || !strings.HasPrefix(f, "_") {
				return true
			}
		}
		return false
	}
	return true
}

func (e *env) pttl(t *testing.T, key string) time.Duration {
	t.Helper()
	d, err := e.rdb.PTTL(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return d
}

// countingQuerier is the real sqlc querier, counting the reads the caches are meant to save and
// optionally holding user and article loads at a gate.
type countingQuerier struct {
	dao.Querier
	byID, byName, byEmail atomic.Int64
	bySlug                atomic.Int64  // ArticleGetBySlug: detail loads and preloads
	listByAuthor          atomic.Int64  // ArticleListByAuthor, ArticleListByAuthorStatus
	countByAuthor         atomic.Int64  // ArticleCountsByAuthor
	listPublished         atomic.Int64  // ArticleListPublished, ArticleListByTag
	feedPages             atomic.Int64  // ArticleListFeed
	feedCounts            atomic.Int64  // ArticleCountFeed
	followLists           atomic.Int64  // FollowListFolloweeIDs
	tagLists              atomic.Int64  // TagListPopular
	counterLoads          atomic.Int64  // InteractiveGetMany
	gate                  *testenv.Gate // nil: no hold; set before the goroutines that use it start
	counterGate           *testenv.Gate // holds counter loads, after they have read; set like gate
	likeGate              *testenv.Gate // holds like statements; set like gate

	mu         sync.Mutex
	counterIDs [][]int64 // the ids of each counter load
	likeCalls  []dao.LikeSetManyCountedParams
}

func (q *countingQuerier) LikeSetManyCounted(ctx context.Context, db dao.DBTX, arg dao.LikeSetManyCountedParams) (dao.LikeSetManyCountedRow, error) {
	q.mu.Lock()
	q.likeCalls = append(q.likeCalls, arg)
	q.mu.Unlock()
	if q.likeGate != nil {
		if err := q.likeGate.Wait(ctx); err != nil {
			return dao.LikeSetManyCountedRow{}, err
		}
	}
	return q.Querier.LikeSetManyCounted(ctx, db, arg)
}

// likeStatements returns the users of each like statement, in order: on, then off.
func (q *countingQuerier) likeStatements() [][2][]int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([][2][]int64, len(q.likeCalls))
	for i, c := range q.likeCalls {
		out[i] = [2][]int64{c.OnUsers, c.OffUsers}
	}
	return out
}

// counterBatches returns the ids each counter load asked for, in order.
func (q *countingQuerier) counterBatches() [][]int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.counterIDs)
}

func (q *countingQuerier) ArticleGetBySlug(ctx context.Context, db dao.DBTX, slug string) (dao.ArticleGetBySlugRow, error) {
	q.bySlug.Add(1)
	if err := q.hold(ctx); err != nil {
		return dao.ArticleGetBySlugRow{}, err
	}
	return q.Querier.ArticleGetBySlug(ctx, db, slug)
}

func (q *countingQuerier) ArticleListByAuthor(ctx context.Context, db dao.DBTX, arg dao.ArticleListByAuthorParams) ([]dao.ArticleListByAuthorRow, error) {
	q.listByAuthor.Add(1)
	return q.Querier.ArticleListByAuthor(ctx, db, arg)
}

func (q *countingQuerier) ArticleListPublished(ctx context.Context, db dao.DBTX, arg dao.ArticleListPublishedParams) ([]dao.ArticleListPublishedRow, error) {
	q.listPublished.Add(1)
	return q.Querier.ArticleListPublished(ctx, db, arg)
}

func (q *countingQuerier) ArticleListByTag(ctx context.Context, db dao.DBTX, arg dao.ArticleListByTagParams) ([]dao.ArticleListByTagRow, error) {
	q.listPublished.Add(1)
	return q.Querier.ArticleListByTag(ctx, db, arg)
}

func (q *countingQuerier) ArticleListFeed(ctx context.Context, db dao.DBTX, arg dao.ArticleListFeedParams) ([]dao.ArticleListFeedRow, error) {
	q.feedPages.Add(1)
	return q.Querier.ArticleListFeed(ctx, db, arg)
}

func (q *countingQuerier) ArticleCountFeed(ctx context.Context, db dao.DBTX, followerID int64) (int64, error) {
	q.feedCounts.Add(1)
	return q.Querier.ArticleCountFeed(ctx, db, followerID)
}

func (q *countingQuerier) FollowListFolloweeIDs(ctx context.Context, db dao.DBTX, followerID int64) ([]int64, error) {
	q.followLists.Add(1)
	return q.Querier.FollowListFolloweeIDs(ctx, db, followerID)
}

func (q *countingQuerier) ArticleListByAuthorStatus(ctx context.Context, db dao.DBTX, arg dao.ArticleListByAuthorStatusParams) ([]dao.ArticleListByAuthorStatusRow, error) {
	q.listByAuthor.Add(1)
	return q.Querier.ArticleListByAuthorStatus(ctx, db, arg)
}

func (q *countingQuerier) ArticleCountsByAuthor(ctx context.Context, db dao.DBTX, authorID int64) (dao.ArticleCountsByAuthorRow, error) {
	q.countByAuthor.Add(1)
	return q.Querier.ArticleCountsByAuthor(ctx, db, authorID)
}

func (q *countingQuerier) TagListPopular(ctx context.Context, db dao.DBTX, lim int32) ([]string, error) {
	q.tagLists.Add(1)
	return q.Querier.TagListPopular(ctx, db, lim)
}

func (q *countingQuerier) InteractiveGetMany(ctx context.Context, db dao.DBTX, arg dao.InteractiveGetManyParams) ([]dao.InteractiveGetManyRow, error) {
	q.mu.Lock()
	q.counterIDs = append(q.counterIDs, slices.Clone(arg.BizIds))
	q.mu.Unlock()
	q.counterLoads.Add(1)
	rows, err := q.Querier.InteractiveGetMany(ctx, db, arg)
	if err == nil && q.counterGate != nil {
		err = q.counterGate.Wait(ctx)
	}
	return rows, err
}

func (q *countingQuerier) UserGetByID(ctx context.Context, db dao.DBTX, id int64) (dao.User, error) {
	q.byID.Add(1)
	if err := q.hold(ctx); err != nil {
		return dao.User{}, err
	}
	return q.Querier.UserGetByID(ctx, db, id)
}

func (q *countingQuerier) UserGetByUsername(ctx context.Context, db dao.DBTX, username string) (dao.User, error) {
	q.byName.Add(1)
	if err := q.hold(ctx); err != nil {
		return dao.User{}, err
	}
	return q.Querier.UserGetByUsername(ctx, db, username)
}

func (q *countingQuerier) UserGetByEmail(ctx context.Context, db dao.DBTX, email string) (dao.User, error) {
	q.byEmail.Add(1)
	return q.Querier.UserGetByEmail(ctx, db, email)
}

func (q *countingQuerier) hold(ctx context.Context) error {
	if q.gate == nil {
		return nil
	}
	return q.gate.Wait(ctx)
}

// userOpts are the fields of a user to create; empty ones get unique defaults.
type userOpts struct {
	Username, Email, PasswordHash, Bio, Image string
}

func createUser(t *testing.T, repo *repository.UserRepository, o userOpts) domain.User {
	t.Helper()
	if o.Username == "" {
		o.Username = uniqueName("user")
	}
	if o.Email == "" {
		o.Email = strings.ToLower(o.Username) + "@example.com"
	}
	if o.PasswordHash == "" {
		o.PasswordHash = "$argon2id$v=19$m=65536,t=1,p=4$" + testenv.RandomID(8)
	}
	u, err := repo.Create(t.Context(), domain.User{
		Email: o.Email, Username: o.Username, PasswordHash: o.PasswordHash, Bio: o.Bio, Image: o.Image,
	})
	if err != nil {
		t.Fatalf("create user %q: %v", o.Username, err)
	}
	return u
}

// uniqueName returns a username no other test uses.
func uniqueName(base string) string { return base + "_" + testenv.RandomID(5) }

// public is u as reads through the cache return it: without the password hash.
func public(u domain.User) domain.User {
	u.PasswordHash = ""
	return u
}

// sameUser compares users, timestamps by instant (a JSON round trip drops the monotonic clock and
// may change the location).
func sameUser(a, b domain.User) bool {
	return a.ID == b.ID && a.Email == b.Email && a.Username == b.Username && a.PasswordHash == b.PasswordHash &&
		a.Bio == b.Bio && a.Image == b.Image && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

// checkShortNullPTTL asserts that d, the PTTL of a null marker written at or after since, is within
// (0, NullTTL+NullTTL/4]. Only on a machine so stalled that the marker expired before it could be
// looked at does it settle for checking that the marker did not vanish early.
func checkShortNullPTTL(t *testing.T, d time.Duration, p cache.Policy, since time.Time) {
	t.Helper()
	maxTTL := p.NullTTL + p.NullTTL/4
	switch {
	case d == -1: // go-redis reports "no expiry" as -1 (and "no key" as -2), unscaled
		t.Fatal("null marker has no expiry")
	case d > maxTTL:
		t.Fatalf("null marker PTTL = %v, want at most %v", d, maxTTL)
	case d > 0:
	case time.Since(since) < p.NullTTL:
		t.Fatalf("null marker gone after %v, before its NullTTL of %v", time.Since(since), p.NullTTL)
	default:
		t.Logf("marker expired before its PTTL was read (%v later); bounds unchecked", time.Since(since))
	}
}

// articleOpts are the fields of an article to create; empty ones get unique defaults.
type articleOpts struct {
	Author      domain.User // zero: a new user
	Title       string      // empty: unique
	Slug        string      // empty: the slugified title plus a random tail
	Description string
	Body        string
	Tags        []string
	Status      domain.ArticleStatus // empty: published
}

func createArticle(t *testing.T, e *env, o articleOpts) domain.Article {
	t.Helper()
	if o.Author.ID == 0 {
		o.Author = createUser(t, e.users, userOpts{})
	}
	if o.Title == "" {
		o.Title = "Article " + testenv.RandomID(4)
	}
	if o.Slug == "" {
		o.Slug = domain.Slugify(o.Title) + "-" + testenv.RandomID(4)
	}
	if o.Description == "" {
		o.Description = "About " + o.Title
	}
	if o.Body == "" {
		o.Body = "The body of " + o.Title
	}
	if o.Status == "" {
		o.Status = domain.StatusPublished
	}
	a, err := e.articles.Create(t.Context(), domain.Article{
		Slug: o.Slug, AuthorID: o.Author.ID, Title: o.Title, Description: o.Description, Body: o.Body,
		Tags: o.Tags, Status: o.Status,
	})
	if err != nil {
		t.Fatalf("create article %q: %v", o.Slug, err)
	}
	return a
}

// count runs a SELECT count(*) (or any single bigint) straight on PostgreSQL.
func (e *env) count(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := e.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// unpage spreads a list's page into the articles and the total, as most list tests check them.
func unpage(p service.ArticlePage, err error) ([]domain.Article, int64, error) {
	return p.Articles, p.Total, err
}

// plainRenderer renders a body as one escaped paragraph: the use cases under test need a renderer,
// the storage tests do not look at its HTML.
type plainRenderer struct{}

func (plainRenderer) Render(md string) string { return "<p>" + html.EscapeString(md) + "</p>" }
