package repository_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// announced records what a NotificationPublisher was told: the users of each announcement, and
// the notifications the ones that carry them carried.
type announced struct {
	mu    sync.Mutex
	users [][]int64
	items []domain.UserNotification
}

func (a *announced) NotifiedWith(_ context.Context, items []domain.UserNotification) {
	a.mu.Lock()
	defer a.mu.Unlock()
	users := make([]int64, len(items))
	for i, it := range items {
		users[i] = it.UserID
	}
	a.users = append(a.users, users)
	a.items = append(a.items, items...)
}

func (a *announced) Notified(_ context.Context, userIDs []int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.users = append(a.users, slices.Clone(userIDs))
}

// The followers a publication notified are announced once, after the commit; a redelivered event
// (nothing written) announces nobody. After reads them back by id for the stream.
func TestNotificationRepository_AnnouncesAfterCommitAndReadsByID(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	pub := &announced{}
	notes := repository.NewPublishingNotificationRepository(e.pool, dao.New(), pub)
	author := createUser(t, e.users, userOpts{})
	r1, r2 := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
	for _, r := range []domain.User{r1, r2} {
		if err := e.follows.Follow(t.Context(), r.ID, author.ID); err != nil {
			t.Fatal(err)
		}
	}
	a1, a2 := createArticle(t, e, articleOpts{Author: author}), createArticle(t, e, articleOpts{Author: author})
	latest, err := notes.LatestID(t.Context(), r1.ID)
	if err != nil || latest != 0 {
		t.Fatalf("latest before any = %d, %v", latest, err)
	}
	for _, ev := range []struct {
		id string
		a  domain.Article
	}{{"ev-1", a1}, {"ev-2", a2}, {"ev-1", a1}} {
		if _, err := notes.NotifyFollowers(t.Context(), "notifications", ev.id, domain.TopicArticlePublished, author.ID, ev.a.ID, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(pub.users) != 2 {
		t.Fatalf("announced %v, want two publications", pub.users)
	}
	for _, users := range pub.users {
		slices.Sort(users)
		if !slices.Equal(users, []int64{min(r1.ID, r2.ID), max(r1.ID, r2.ID)}) {
			t.Fatalf("announced %v, want the two followers", users)
		}
	}
	all, err := notes.After(t.Context(), r1.ID, 0, 10)
	if err != nil || len(all) != 2 || all[0].ID >= all[1].ID || all[0].ArticleSlug != a1.Slug || all[0].ActorUsername != author.Username {
		t.Fatalf("after 0 = %+v, %v", all, err)
	}
	// The announcements carried r1's notifications exactly as the stream reads them.
	var carried []domain.Notification
	for _, it := range pub.items {
		if it.UserID == r1.ID {
			carried = append(carried, it.Notification)
		}
	}
	if len(carried) != 2 {
		t.Fatalf("carried %+v, want r1's two", carried)
	}
	for i := range carried {
		c, a := carried[i], all[i]
		if c.ID != a.ID || c.Kind != a.Kind || c.ActorUsername != a.ActorUsername || c.ArticleSlug != a.ArticleSlug ||
			c.ArticleTitle != a.ArticleTitle || c.Detail != a.Detail || !c.CreatedAt.Equal(a.CreatedAt) || a.ReadAt != nil {
			t.Fatalf("carried %+v, read %+v", c, a)
		}
	}
	rest, err := notes.After(t.Context(), r1.ID, all[0].ID, 10)
	if err != nil || len(rest) != 1 || rest[0].ID != all[1].ID {
		t.Fatalf("after %d = %+v, %v", all[0].ID, rest, err)
	}
	// Reads arriving together share a statement, and each gets its own answer.
	var wg sync.WaitGroup
	got := make([][]domain.Notification, 40)
	for i := range got {
		wg.Go(func() {
			user, after := r1.ID, int64(0)
			if i%2 == 1 {
				user, after = r2.ID, all[0].ID // r2's ids differ from r1's; after r1's first is a bound only
			}
			got[i], _ = notes.After(t.Context(), user, after, 10)
		})
	}
	wg.Wait()
	for i, g := range got {
		if i%2 == 0 && (len(g) != 2 || g[0].ID != all[0].ID) {
			t.Fatalf("read %d (r1 after 0) = %+v", i, g)
		}
		for _, n := range g {
			if i%2 == 1 && n.ID <= all[0].ID {
				t.Fatalf("read %d (r2 after %d) = %+v", i, all[0].ID, g)
			}
		}
	}
	if latest, _ = notes.LatestID(t.Context(), r1.ID); latest != all[1].ID {
		t.Fatalf("latest = %d, want %d", latest, all[1].ID)
	}
}
