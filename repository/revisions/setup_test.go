package revisions_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/revisions"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// These tests run against the real PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL), each
// top-level test on a database of its own. Articles are written through the core article
// repository, as the API writes them: its Update keeps the revisions (Store.WriteIn).

// testPolicy is long enough that nothing expires while a test runs.
var testPolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: 2 * time.Minute, LoadTimeout: 30 * time.Second}

type env struct {
	pool     *pgxpool.Pool
	users    *repository.UserRepository
	articles *repository.ArticleRepository
	revs     *revisions.Store
}

func setup(t testing.TB) *env {
	t.Helper()
	db := testenv.NewDB(t)
	r := testenv.NewRedis(t)
	pool, log, ks, q := db.Pool, testenv.Logger(t), cache.Keyspace(r.Prefix), dao.New()
	return &env{
		pool:  pool,
		users: repository.NewUserRepository(pool, q, cache.NewUserCache(r.Client, ks, testPolicy, log), log, nil),
		articles: repository.NewArticleRepository(pool, q, cache.NewArticleCache(r.Client, ks, testPolicy, nil, log),
			cache.NewAuthorPageCache(r.Client, ks, testPolicy), cache.NewListPageCache(r.Client, ks, testPolicy, log),
			cache.NewTagsCache(r.Client, ks, testPolicy, log), search.Language("english"), log, nil),
		revs: revisions.NewStore(pool, q, nil),
	}
}

// createArticle writes an article with status by a new author.
func (e *env) createArticle(t *testing.T, status domain.ArticleStatus) domain.Article {
	t.Helper()
	name := "user_" + testenv.RandomID(5)
	u, err := e.users.Create(t.Context(), domain.User{
		Email: name + "@example.com", Username: name, PasswordHash: "$argon2id$v=19$m=65536,t=1,p=4$" + testenv.RandomID(8),
	})
	if err != nil {
		t.Fatal(err)
	}
	title := "Article " + testenv.RandomID(4)
	a, err := e.articles.Create(t.Context(), domain.Article{
		Slug: domain.Slugify(title), AuthorID: u.ID, Title: title, Description: "About it", Body: "Body 1",
		Tags: []string{"go"}, Status: status,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// edit changes a's body to body, as the edit use case does (with the version guard when
// expected is set).
func (e *env) edit(t *testing.T, id int64, body string) domain.Article {
	t.Helper()
	a, err := e.articles.Update(t.Context(), id, func(cur *domain.Article) error {
		cur.Body = body
		return nil
	})
	if err != nil {
		t.Fatalf("edit article %d: %v", id, err)
	}
	return a
}

// versions lists every kept version of the article, newest first, paging through the store.
func (e *env) versions(t *testing.T, id int64) []int32 {
	t.Helper()
	var out []int32
	var before int32
	for {
		page, err := e.revs.List(t.Context(), id, before, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			out = append(out, r.Version)
		}
		if len(page) < 7 {
			return out
		}
		before = page[len(page)-1].Version
	}
}
