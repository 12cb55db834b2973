package search_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// These tests run against the real PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL). Each
// top-level test migrates a database of its own; its subtests share it, each with its own Redis key
// prefix and caches, and with users whose names no other subtest uses. Articles are written
// through the core article repository, as the API writes them (their search documents come with
// the write); searches hydrate cached hit lists through it.

// testPolicy is long enough that nothing expires while a test runs.
var testPolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: 2 * time.Minute, LoadTimeout: 30 * time.Second}

type env struct {
	pool     *pgxpool.Pool
	users    *repository.UserRepository
	articles *repository.ArticleRepository
	inter    *repository.InteractiveRepository
	search   *search.Repository
}

type envOpts struct {
	DeadRedis bool // the caches talk to a port where nothing listens
}

func setup(t testing.TB, db *testenv.DB, o envOpts) *env {
	t.Helper()
	r := testenv.NewRedis(t)
	cacheRDB := r.Client
	if o.DeadRedis {
		cacheRDB = testenv.DeadRedis(t)
	}
	pool, log, ks, q := db.Pool, testenv.Logger(t), cache.Keyspace(r.Prefix), dao.New()
	viewers := cache.NewViewerState(cacheRDB, ks, testPolicy, log)
	lists := cache.NewListPageCache(cacheRDB, ks, testPolicy, log)
	e := &env{
		pool:  pool,
		users: repository.NewUserRepository(pool, q, cache.NewUserCache(cacheRDB, ks, testPolicy, log), log, nil),
		inter: repository.NewInteractiveRepository(pool, q, cache.NewCounters(cacheRDB, ks, testPolicy, log), viewers),
	}
	e.articles = repository.NewArticleRepository(pool, q, cache.NewArticleCache(cacheRDB, ks, testPolicy, nil, log),
		cache.NewAuthorPageCache(cacheRDB, ks, testPolicy), lists, cache.NewTagsCache(cacheRDB, ks, testPolicy, log), search.Language("english"), log, nil)
	e.search = search.NewRepository(search.Pool{Pool: pool}, search.Replicas{}, q, search.Language("english"), e.articles, cache.NewSearchCache(cacheRDB, ks), log)
	return e
}

// userOpts are the fields of a user to create; empty ones get unique defaults.
type userOpts struct {
	Username, Email, PasswordHash, Bio, Image string
}

func createUser(t *testing.T, repo *repository.UserRepository, o userOpts) domain.User {
	t.Helper()
	if o.Username == "" {
		o.Username = "user_" + testenv.RandomID(5)
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
