package repository_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// schedule schedules a to publish at at in a unit of work of its own.
func (e *env) schedule(t *testing.T, id int64, at time.Time) (domain.Article, error) {
	t.Helper()
	var out domain.Article
	err := pg.NewUnitOfWork(e.pool).InTx(t.Context(), func(tx service.Tx) error {
		var err error
		out, err = e.articles.ScheduleIn(t.Context(), tx, id, at)
		return err
	})
	return out, err
}

func TestArticleRepository_Schedule(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)

	t.Run("a draft is scheduled, hidden from the public lists, listed for its author", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft, Tags: []string{"sched"}})
		got, err := e.schedule(t, a.ID, at)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != domain.StatusScheduled || got.PublishAt == nil || !got.PublishAt.Equal(at) || got.Version != a.Version+1 || got.PublishedAt != nil {
			t.Fatalf("scheduled: %+v", got)
		}
		// Read back through the cache twice: the detail carries publishAt.
		for i := range 2 {
			if r := e.getArticle(t, a.Slug); r.Status != domain.StatusScheduled || r.PublishAt == nil || !r.PublishAt.Equal(at) {
				t.Fatalf("read %d: %+v", i, r)
			}
		}
		page, err := e.articles.ListByAuthor(t.Context(), a.AuthorID, domain.StatusScheduled, domain.Page{Limit: domain.DefaultPageLimit})
		if err != nil || len(page.Articles) != 1 || page.Total != 1 || page.Articles[0].ID != a.ID || page.Articles[0].PublishAt == nil {
			t.Fatalf("scheduled list: %+v, %v", page, err)
		}
		all, err := e.articles.ListByAuthor(t.Context(), a.AuthorID, "", domain.Page{Limit: domain.DefaultPageLimit})
		if err != nil || len(all.Articles) != 1 || all.Total != 1 {
			t.Fatalf("all statuses: %+v, %v", all, err)
		}
		pub, err := e.articles.ListPublished(t.Context(), service.ArticleQuery{Tag: "sched", Page: domain.Page{Limit: 10}})
		if err != nil || len(pub.Articles) != 0 {
			t.Fatalf("tag list shows the scheduled article: %+v, %v", pub, err)
		}
		if n := e.count(t, "SELECT count(*) FROM articles WHERE id = $1 AND search_vector IS NOT NULL", a.ID); n != 0 {
			t.Errorf("a scheduled article has a search document")
		}
	})

	t.Run("scheduling again moves the time; a published article is an illegal transition", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		if _, err := e.schedule(t, a.ID, at); err != nil {
			t.Fatal(err)
		}
		later := at.Add(time.Hour)
		got, err := e.schedule(t, a.ID, later)
		if err != nil || !got.PublishAt.Equal(later) {
			t.Fatalf("rescheduled: %+v, %v", got, err)
		}
		pub := createArticle(t, e, articleOpts{})
		if _, err := e.schedule(t, pub.ID, at); !errors.Is(err, domain.ErrIllegalTransition) {
			t.Fatalf("scheduling a published article: %v, want ErrIllegalTransition", err)
		}
	})

	t.Run("unschedule returns it to draft; a stale publish is a no-op", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		if _, err := e.schedule(t, a.ID, at); err != nil {
			t.Fatal(err)
		}
		got, err := e.articles.Unschedule(t.Context(), a.ID)
		if err != nil || got.Status != domain.StatusDraft || got.PublishAt != nil {
			t.Fatalf("unscheduled: %+v, %v", got, err)
		}
		if _, err := e.articles.Unschedule(t.Context(), a.ID); !errors.Is(err, domain.ErrIllegalTransition) {
			t.Fatalf("unscheduling a draft: %v", err)
		}
		_, published, err := e.articles.PublishScheduled(t.Context(), a.ID, at)
		if err != nil || published {
			t.Fatalf("stale publish: published=%v err=%v", published, err)
		}
		if r := e.getArticle(t, a.Slug); r.Status != domain.StatusDraft {
			t.Fatalf("after the stale job: %+v", r)
		}
	})

	t.Run("a publish for an old time after rescheduling is a no-op", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		if _, err := e.schedule(t, a.ID, at); err != nil {
			t.Fatal(err)
		}
		if _, err := e.schedule(t, a.ID, at.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, published, err := e.articles.PublishScheduled(t.Context(), a.ID, at); err != nil || published {
			t.Fatalf("old time: published=%v err=%v", published, err)
		}
		if _, published, err := e.articles.PublishScheduled(t.Context(), a.ID, at.Add(time.Minute)); err != nil || !published {
			t.Fatalf("current time: published=%v err=%v", published, err)
		}
	})

	t.Run("a manual publish or withdrawal cancels the schedule", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		for _, to := range []domain.ArticleStatus{domain.StatusPublished, domain.StatusWithdrawn} {
			a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
			if _, err := e.schedule(t, a.ID, at); err != nil {
				t.Fatal(err)
			}
			moved, err := e.articles.Transition(t.Context(), a.ID, []domain.ArticleStatus{domain.StatusScheduled}, to)
			if err != nil || moved.Status != to || moved.PublishAt != nil {
				t.Fatalf("to %s: %+v, %v", to, moved, err)
			}
			if _, published, err := e.articles.PublishScheduled(t.Context(), a.ID, at); err != nil || published {
				t.Fatalf("job after a manual %s: published=%v err=%v", to, published, err)
			}
		}
	})

	t.Run("an edit keeps the schedule", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		if _, err := e.schedule(t, a.ID, at); err != nil {
			t.Fatal(err)
		}
		got, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error { cur.Title = "Edited"; return nil })
		if err != nil || got.Status != domain.StatusScheduled || got.PublishAt == nil || !got.PublishAt.Equal(at) {
			t.Fatalf("edited: %+v, %v", got, err)
		}
	})

	t.Run("the job claimed twice publishes once: one publication, one outbox event", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft, Tags: []string{"twice"}})
		if _, err := e.schedule(t, a.ID, at); err != nil {
			t.Fatal(err)
		}
		const runs = 2
		start := make(chan struct{})
		results := make(chan bool, runs)
		var wg sync.WaitGroup
		for range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, published, err := e.articles.PublishScheduled(t.Context(), a.ID, at)
				if err != nil {
					t.Error(err)
				}
				results <- published
			}()
		}
		close(start)
		wg.Wait()
		close(results)
		n := 0
		for p := range results {
			if p {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d runs published, want 1", n)
		}
		if got := e.count(t, "SELECT count(*) FROM outbox WHERE aggregate_id = $1 AND topic = $2", a.ID, domain.TopicArticlePublished); got != 1 {
			t.Fatalf("%d publish events in the outbox, want 1", got)
		}
		r := e.getArticle(t, a.Slug)
		if r.Status != domain.StatusPublished || r.PublishAt != nil || r.PublishedAt == nil {
			t.Fatalf("published: %+v", r)
		}
		if n := e.count(t, "SELECT count(*) FROM articles WHERE id = $1 AND search_vector IS NOT NULL", a.ID); n != 1 {
			t.Errorf("the published article has no search document")
		}
		pub, err := e.articles.ListPublished(t.Context(), service.ArticleQuery{Tag: "twice", Page: domain.Page{Limit: 10}})
		if err != nil || len(pub.Articles) != 1 {
			t.Fatalf("tag list after publication: %+v, %v", pub, err)
		}
	})

	t.Run("an author suspended meanwhile gets it published but hidden, with no event", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		if _, err := e.schedule(t, a.ID, at); err != nil {
			t.Fatal(err)
		}
		if _, err := e.pool.Exec(t.Context(), "UPDATE users SET suspended_until = now() + interval '1 hour' WHERE id = $1", a.AuthorID); err != nil {
			t.Fatal(err)
		}
		got, published, err := e.articles.PublishScheduled(t.Context(), a.ID, at)
		if err != nil || !published || got.Status != domain.StatusPublished || !got.Moderation.Hidden || got.Public() {
			t.Fatalf("published during a suspension: %+v, %v, %v", got, published, err)
		}
		if n := e.count(t, "SELECT count(*) FROM outbox WHERE aggregate_id = $1", a.ID); n != 0 {
			t.Fatalf("%d outbox events for a hidden publication", n)
		}
		if n := e.count(t, "SELECT count(*) FROM articles WHERE id = $1 AND status = 'hidden' AND hidden_reason IS NULL AND search_vector IS NULL", a.ID); n != 1 {
			t.Fatal("not hidden the way a suspension hides (no reason, no search document)")
		}
	})

	t.Run("the check refuses a scheduled status without a time", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		if _, err := e.pool.Exec(t.Context(), "UPDATE articles SET status = 'scheduled' WHERE id = $1", a.ID); err == nil {
			t.Fatal("a scheduled article without publish_at was stored")
		}
	})
}
