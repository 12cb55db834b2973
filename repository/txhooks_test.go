package repository_test

import (
	"context"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// TestIdempotentRequestCacheChangesWaitForCommit: a write made inside an idempotent request's
// transaction changes the caches only once that transaction has committed — before it, a reader
// could refill a cache from the state without the write — and not at all when it rolls back.
func TestIdempotentRequestCacheChangesWaitForCommit(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	store := repository.NewIdempotencyStore(e.pool, e.q)
	ctx := t.Context()
	respond := func(status int) domain.StoredResponse {
		return domain.StoredResponse{Status: status, Body: []byte("{}")}
	}

	t.Run("like", func(t *testing.T) {
		a := createArticle(t, e, articleOpts{})
		fan := createUser(t, e.users, userOpts{})
		e.countersOf(t, a.ID) // the hash exists, so an increment would show
		_, _, err := store.Do(ctx, "user:like", testenv.RandomID(8), "h", func(ctx context.Context) domain.StoredResponse {
			if err := e.inter.Like(ctx, domain.BizArticle, a.ID, fan.ID); err != nil {
				t.Errorf("Like: %v", err)
			}
			if n, _ := e.redisLikes(t, a.ID); n != 0 {
				t.Errorf("Redis like_cnt = %d inside the transaction, want 0 until it commits", n)
			}
			return respond(200)
		})
		if err != nil {
			t.Fatal(err)
		}
		e.checkLikes(t, a.ID, 1)
	})

	t.Run("like_rolled_back", func(t *testing.T) {
		a := createArticle(t, e, articleOpts{})
		fan := createUser(t, e.users, userOpts{})
		e.countersOf(t, a.ID)
		_, _, err := store.Do(ctx, "user:like", testenv.RandomID(8), "h", func(ctx context.Context) domain.StoredResponse {
			if err := e.inter.Like(ctx, domain.BizArticle, a.ID, fan.ID); err != nil {
				t.Errorf("Like: %v", err)
			}
			return respond(503) // a server error: the transaction rolls back
		})
		if err != nil {
			t.Fatal(err)
		}
		e.checkLikes(t, a.ID, 0)
	})

	t.Run("article_update", func(t *testing.T) {
		a := createArticle(t, e, articleOpts{})
		e.getArticle(t, a.Slug) // cached
		_, _, err := store.Do(ctx, "user:edit", testenv.RandomID(8), "h", func(ctx context.Context) domain.StoredResponse {
			_, err := e.articles.Update(ctx, a.ID, func(x *domain.Article) error {
				x.Title = "Changed in an idempotent request"
				return nil
			})
			if err != nil {
				t.Errorf("Update: %v", err)
			}
			if c, ok := e.cachedArticle(t, a.Slug); !ok || c.Title != a.Title {
				t.Errorf("cache entry inside the transaction: %+v (present %v), want the old one until the commit", c, ok)
			}
			return respond(200)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.getArticle(t, a.Slug); got.Title != "Changed in an idempotent request" {
			t.Fatalf("after the commit the article reads %q: the cache kept the old entry", got.Title)
		}
	})
}
