package repository_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// countDrift compares every maintained count and projection with what counting the articles and
// likes themselves gives, and returns one line per difference.
const countDrift = `
WITH truth_authors AS (
    SELECT author_id, count(*) FILTER (WHERE status = 'draft') AS drafts,
           count(*) FILTER (WHERE status = 'published') AS published,
           count(*) FILTER (WHERE status = 'withdrawn') AS withdrawn
    FROM articles GROUP BY author_id
), truth_tags AS (
    SELECT t.tag, a.created_at, a.id
    FROM articles a, unnest(a.tag_list) t(tag) WHERE a.status = 'published'
), truth_favorites AS (
    SELECT l.user_id, a.created_at, a.id
    FROM likes l JOIN articles a ON a.id = l.biz_id AND a.status = 'published'
    WHERE l.biz = 'article' AND l.liked
)
SELECT 'site' AS what, (SELECT sum(published) FROM site_article_counts)::text || ' vs ' ||
       (SELECT count(*) FROM articles WHERE status = 'published')::text AS diff
WHERE (SELECT sum(published) FROM site_article_counts) <> (SELECT count(*) FROM articles WHERE status = 'published')
UNION ALL
SELECT 'author ' || COALESCE(c.author_id, t.author_id), row(c.drafts, c.published, c.withdrawn)::text || ' vs ' || row(t.drafts, t.published, t.withdrawn)::text
FROM author_article_counts c FULL JOIN truth_authors t ON t.author_id = c.author_id
WHERE row(COALESCE(c.drafts, 0), COALESCE(c.published, 0), COALESCE(c.withdrawn, 0))
      IS DISTINCT FROM row(COALESCE(t.drafts, 0), COALESCE(t.published, 0), COALESCE(t.withdrawn, 0))
UNION ALL
SELECT 'tag count ' || COALESCE(c.tag, t.tag), COALESCE(c.published, 0)::text || ' vs ' || COALESCE(t.n, 0)::text
FROM tag_article_counts c FULL JOIN (SELECT tag, count(*) AS n FROM truth_tags GROUP BY tag) t ON t.tag = c.tag
WHERE COALESCE(c.published, 0) <> COALESCE(t.n, 0)
UNION ALL
(SELECT 'article_tags', count(*)::text || ' rows differ'
 FROM ((SELECT tag, created_at, article_id FROM article_tags EXCEPT SELECT * FROM truth_tags)
       UNION ALL (SELECT * FROM truth_tags EXCEPT SELECT tag, created_at, article_id FROM article_tags)) d
 HAVING count(*) > 0)
UNION ALL
SELECT 'favorites of ' || COALESCE(c.user_id, t.user_id), COALESCE(c.favorites, 0)::text || ' vs ' || COALESCE(t.n, 0)::text
FROM user_favorite_counts c FULL JOIN (SELECT user_id, count(*) AS n FROM truth_favorites GROUP BY user_id) t ON t.user_id = c.user_id
WHERE COALESCE(c.favorites, 0) <> COALESCE(t.n, 0)
UNION ALL
(SELECT 'favorite_articles', count(*)::text || ' rows differ'
 FROM ((SELECT user_id, created_at, article_id FROM favorite_articles EXCEPT SELECT * FROM truth_favorites)
       UNION ALL (SELECT * FROM truth_favorites EXCEPT SELECT user_id, created_at, article_id FROM favorite_articles)) d
 HAVING count(*) > 0)`

func requireNoCountDrift(t *testing.T, e *env) {
	t.Helper()
	rows, err := e.pool.Query(t.Context(), countDrift)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var what, diff string
		if err := rows.Scan(&what, &diff); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s: maintained %s counted", what, diff)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// Writers race on a few authors' articles: publishes, withdrawals, deletes, tag edits, likes and
// unlikes, moderators' hides and unhides, and suspensions of an author (hiding all of their
// published articles) and their ends, many at once on the same articles. At the end, every count and projection equals what
// counting the rows gives, and the lists' articlesCount answers the same.
func TestListCounts_StayExactUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	ctx := t.Context()
	authors := []domain.User{createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})}
	var likers []domain.User
	for range 6 {
		likers = append(likers, createUser(t, e.users, userOpts{}))
	}
	tags := []string{"go", "sql", "redis", "cache"}
	var (
		mu   sync.Mutex
		arts []domain.Article
	)
	for i := range 12 {
		status := domain.StatusPublished
		if i%3 == 0 {
			status = domain.StatusDraft
		}
		a, err := e.articles.Create(ctx, domain.Article{
			Slug: fmt.Sprintf("race-%d-%s", i, testenv.RandomID(4)), AuthorID: authors[i%2].ID, Title: "t", Description: "d", Body: "b",
			Tags: []string{tags[i%4], tags[(i+1)%4]}, Status: status,
		})
		if err != nil {
			t.Fatal(err)
		}
		arts = append(arts, a)
	}
	pick := func(rng *rand.Rand) domain.Article {
		mu.Lock()
		defer mu.Unlock()
		return arts[rng.IntN(len(arts))]
	}
	uow := pg.NewUnitOfWork(e.pool)
	const workers, opsEach = 8, 60
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range opsEach {
				a := pick(rng)
				var err error
				switch op := rng.IntN(12); {
				case op < 4:
					u := likers[rng.IntN(len(likers))]
					if rng.IntN(2) == 0 {
						err = e.inter.Like(ctx, domain.BizArticle, a.ID, u.ID)
					} else {
						err = e.inter.Unlike(ctx, domain.BizArticle, a.ID, u.ID)
					}
				case op < 6:
					_, err = e.articles.Transition(ctx, a.ID, []domain.ArticleStatus{domain.StatusDraft, domain.StatusWithdrawn}, domain.StatusPublished)
				case op < 8:
					_, err = e.articles.Transition(ctx, a.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn)
				case op < 9:
					_, err = e.articles.Update(ctx, a.ID, func(art *domain.Article) error {
						art.Tags = []string{tags[rng.IntN(4)]}
						return nil
					})
				case op < 10:
					if rng.IntN(4) == 0 { // deletes are rarer: keep articles to race on
						err = e.articles.Delete(ctx, a)
					}
				case op < 11:
					err = uow.InTx(ctx, func(tx service.Tx) error {
						if rng.IntN(2) == 0 {
							_, err := e.articles.HideIn(ctx, tx, a.ID, "race")
							return err
						}
						_, _, err := e.articles.UnhideIn(ctx, tx, a.ID)
						return err
					})
				default:
					err = uow.InTx(ctx, func(tx service.Tx) error {
						if rng.IntN(2) == 0 {
							_, err := e.articles.HideByAuthorIn(ctx, tx, a.AuthorID)
							return err
						}
						_, err := e.articles.RestoreByAuthorIn(ctx, tx, a.AuthorID)
						return err
					})
				}
				if errors.Is(err, domain.ErrIllegalTransition) || errors.Is(err, domain.ErrNotFound) || errors.Is(err, domain.ErrStaleVersion) {
					err = nil // lost a race the rules settle: nothing changed
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	requireNoCountDrift(t, e)

	// The lists answer the counts.
	var want int64
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM articles WHERE status = 'published'`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	_, total, err := unpage(e.articles.ListPublished(ctx, service.ArticleQuery{Page: domain.Page{Limit: 1}}))
	if err != nil || total != want {
		t.Fatalf("global articlesCount = %d, %v; want %d", total, err, want)
	}
	for _, u := range likers {
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM likes l JOIN articles a ON a.id = l.biz_id AND a.status = 'published'
			WHERE l.user_id = $1 AND l.biz = 'article' AND l.liked`, u.ID).Scan(&want); err != nil {
			t.Fatal(err)
		}
		arts, total, err := unpage(e.articles.ListPublished(ctx, service.ArticleQuery{FavoritedBy: u.ID, Page: domain.Page{Limit: 100}}))
		if err != nil || total != want || int64(len(arts)) != want {
			t.Fatalf("favorited by %s: %d articles, articlesCount %d, %v; want %d", u.Username, len(arts), total, err, want)
		}
	}
}
