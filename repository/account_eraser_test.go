package repository_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

func newEraser(t *testing.T, e *env) *repository.AccountEraser {
	ks, log := e.ks, testenv.Logger(t)
	return repository.NewAccountEraser(e.pool, dao.New(), e.cache, e.artCache, e.pages, cache.NewListPageCache(e.rdb, ks, testPolicy, log),
		cache.NewTagsCache(e.rdb, ks, testPolicy, log), e.counters, e.viewers, log)
}

// countsAgree checks every projection and count an account's likes and folders hold up against
// the rows they count: like shards against likes, collect counts against folder items, favorites
// against likes of published articles.
func countsAgree(t *testing.T, e *env) {
	t.Helper()
	for what, q := range map[string]string{
		"like shards vs likes": `SELECT count(*) FROM (
			SELECT biz_id, sum(like_cnt) AS n FROM interactives WHERE biz = 'article' GROUP BY biz_id) s
			FULL JOIN (SELECT biz_id, count(*) AS n FROM likes WHERE biz = 'article' AND liked GROUP BY biz_id) l USING (biz_id)
			WHERE coalesce(s.n, 0) <> coalesce(l.n, 0)`,
		"collects vs folder items": `SELECT count(*) FROM (
			SELECT biz_id, sum(collect_cnt) AS n FROM interactives WHERE biz = 'article' GROUP BY biz_id) s
			FULL JOIN (SELECT article_id AS biz_id, count(*) AS n FROM collection_items GROUP BY article_id) c USING (biz_id)
			WHERE coalesce(s.n, 0) <> coalesce(c.n, 0)`,
		"favorites vs likes of published articles": `SELECT count(*) FROM favorite_articles f
			FULL JOIN (SELECT l.user_id, l.biz_id AS article_id FROM likes l JOIN articles a ON a.id = l.biz_id
			           WHERE l.biz = 'article' AND l.liked AND a.status = 'published') l USING (user_id, article_id)
			WHERE f.user_id IS NULL OR l.user_id IS NULL`,
		"favorite counts": `SELECT count(*) FROM user_favorite_counts c
			FULL JOIN (SELECT user_id, count(*) AS n FROM favorite_articles GROUP BY user_id) f USING (user_id)
			WHERE coalesce(c.favorites, 0) <> coalesce(f.n, 0)`,
	} {
		var bad int
		if err := e.pool.QueryRow(context.Background(), q).Scan(&bad); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if bad != 0 {
			t.Errorf("%s: %d items disagree", what, bad)
		}
	}
}

// Deleting an account leaves no row of it anywhere, and every count it held up (likes, folder
// items, favorites, follows) agrees with the rows left, also while the account itself likes and
// collects, and others like the same articles, during the deletion.
func TestAccountEraser_DeletesEverythingAndKeepsCountsExact(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	ctx := context.Background()
	cols := repository.NewCollectionRepository(e.pool, dao.New(), e.counters, e.viewers)
	victim := createUser(t, e.users, userOpts{Username: "Victim"})
	reader := createUser(t, e.users, userOpts{})
	own := createArticle(t, e, articleOpts{Author: victim, Tags: []string{"gone"}})
	createArticle(t, e, articleOpts{Author: victim, Status: domain.StatusDraft})
	var others []domain.Article
	for range 6 {
		others = append(others, createArticle(t, e, articleOpts{Author: reader}))
	}
	for _, a := range slices.Concat(others[:3], []domain.Article{own}) {
		if err := e.inter.Like(ctx, domain.BizArticle, a.ID, victim.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.inter.Like(ctx, domain.BizArticle, a.ID, reader.ID); err != nil {
			t.Fatal(err)
		}
	}
	folder, err := cols.Create(ctx, domain.Collection{OwnerID: victim.ID, Name: "keep"}, service.MaxCollections)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range others[:2] {
		if _, err := cols.Add(ctx, folder.ID, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO follows (follower_id, followee_id) VALUES ($1, $2), ($2, $1)`,
		`INSERT INTO comments (article_id, seq, author_id, body) VALUES ((SELECT min(id) FROM articles WHERE author_id = $2), 1, $1, 'hi')`,
		`INSERT INTO sessions (id, user_id) VALUES ('victim-session-' || $2::bigint, $1)`,
	} {
		if _, err := e.pool.Exec(ctx, q, victim.ID, reader.ID); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	countsAgree(t, e)

	// The account and others keep writing while it is deleted.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i, a := range others {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch (i + n) % 4 {
				case 0:
					err = e.inter.Like(ctx, domain.BizArticle, a.ID, victim.ID)
				case 1:
					err = e.inter.Unlike(ctx, domain.BizArticle, a.ID, reader.ID)
				case 2:
					_, err = cols.Add(ctx, folder.ID, a.ID)
				default:
					err = e.inter.Like(ctx, domain.BizArticle, a.ID, reader.ID)
				}
				if err != nil && !errors.Is(err, domain.ErrNotFound) {
					t.Error(err)
					return
				}
			}
		})
	}
	var locked domain.User
	gone, err := erase(ctx, newEraser(t, e), e.pool, "victim", func(u domain.User) { locked = u })
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if locked.ID != victim.ID || gone.UserID != victim.ID || gone.Articles != 2 || gone.Comments != 1 || gone.Followers != 1 || gone.Following != 1 || gone.Folders != 1 {
		t.Errorf("erased %+v (fn saw %+v)", gone, locked)
	}
	for table, q := range map[string]string{
		"users": `SELECT count(*) FROM users WHERE id = $1`, "articles": `SELECT count(*) FROM articles WHERE author_id = $1`,
		"comments": `SELECT count(*) FROM comments WHERE author_id = $1`, "likes": `SELECT count(*) FROM likes WHERE user_id = $1`,
		"likes of its articles": `SELECT count(*) FROM likes WHERE biz_id = ANY (SELECT unnest($2::bigint[]))`,
		"follows":               `SELECT count(*) FROM follows WHERE follower_id = $1 OR followee_id = $1`,
		"collections":           `SELECT count(*) FROM collections WHERE owner_id = $1`, "sessions": `SELECT count(*) FROM sessions WHERE user_id = $1`,
		"counters of its articles": `SELECT count(*) FROM interactives WHERE biz_id = ANY (SELECT unnest($2::bigint[]))`,
	} {
		var n int
		args := []any{victim.ID}
		if strings.Contains(q, "$2") {
			args = []any{[]int64{own.ID}}
			q = strings.ReplaceAll(q, "$2", "$1")
		}
		if err := e.pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows of the deleted account left", table, n)
		}
	}
	countsAgree(t, e)
	var events, removals int
	if err := e.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM outbox WHERE topic = 'article.deleted' AND aggregate_id = $1),
		(SELECT count(*) FROM search_lexicon_changes WHERE article_id = $1 AND removed)`, own.ID).Scan(&events, &removals); err != nil {
		t.Fatal(err)
	}
	if events != 1 || removals != 1 {
		t.Errorf("the deleted article: %d deleted events, %d lexicon removals; want 1 each", events, removals)
	}
	if _, err := erase(ctx, newEraser(t, e), e.pool, "victim", func(domain.User) {}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("erasing again: %v, want not found", err)
	}
}

// erase is an account deletion's unit of work as the service opens it: hold the row (held sees
// the account while it is held), then erase the account.
func erase(ctx context.Context, r *repository.AccountEraser, pool *pgxpool.Pool, username string, held func(domain.User)) (domain.ErasedAccount, error) {
	var gone domain.ErasedAccount
	err := pg.NewUnitOfWork(pool).InTx(ctx, func(tx service.Tx) error {
		u, err := r.HoldIn(ctx, tx, username)
		if err != nil {
			return err
		}
		held(u)
		gone, err = r.EraseIn(ctx, tx, u)
		return err
	})
	return gone, err
}
