package repository_test

import (
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// Notifications are dated by their event, so events applied out of order (several consumers in
// parallel, one per instance) still list newest event first; a redelivered event changes nothing.
func TestNotificationRepository_DatedByTheEvent(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	notes := repository.NewNotificationRepository(e.pool, dao.New())
	author, reader := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
	if err := e.follows.Follow(t.Context(), reader.ID, author.ID); err != nil {
		t.Fatal(err)
	}
	older, newer := createArticle(t, e, articleOpts{Author: author}), createArticle(t, e, articleOpts{Author: author})
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	// The newer event is applied first.
	for _, ev := range []struct {
		id string
		a  domain.Article
		at time.Time
	}{{"ev-2", newer, t0.Add(time.Second)}, {"ev-1", older, t0}, {"ev-2", newer, t0.Add(time.Second)}} {
		if _, err := notes.NotifyFollowers(t.Context(), "notifications", ev.id, domain.TopicArticlePublished, author.ID, ev.a.ID, ev.at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := notes.List(t.Context(), reader.ID, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ArticleSlug != newer.Slug || got[1].ArticleSlug != older.Slug {
		t.Fatalf("notifications %+v, want %s then %s", got, newer.Slug, older.Slug)
	}
	if !got[1].CreatedAt.Equal(t0) {
		t.Errorf("dated %v, want the event's %v", got[1].CreatedAt, t0)
	}
}
