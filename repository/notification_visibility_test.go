package repository_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// notifySetup is an author, a follower of theirs and the notification repository.
type notifySetup struct {
	e              *env
	notes          *repository.NotificationRepository
	author, reader domain.User
}

func newNotifySetup(t *testing.T) notifySetup {
	t.Helper()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	s := notifySetup{e: e, notes: repository.NewNotificationRepository(e.pool, dao.New()),
		author: createUser(t, e.users, userOpts{}), reader: createUser(t, e.users, userOpts{})}
	if err := e.follows.Follow(t.Context(), s.reader.ID, s.author.ID); err != nil {
		t.Fatal(err)
	}
	return s
}

// apply applies one publication event of a, as the notifications consumer does.
func (s notifySetup) apply(t *testing.T, eventID string, a domain.Article) int {
	t.Helper()
	n, err := s.notes.NotifyFollowers(t.Context(), "notifications", eventID, domain.TopicArticlePublished, s.author.ID, a.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (s notifySetup) move(t *testing.T, a domain.Article, from, to domain.ArticleStatus) {
	t.Helper()
	if _, err := s.e.articles.Transition(t.Context(), a.ID, []domain.ArticleStatus{from}, to); err != nil {
		t.Fatal(err)
	}
}

func (s notifySetup) list(t *testing.T) []domain.Notification {
	t.Helper()
	got, err := s.notes.List(t.Context(), s.reader.ID, nil, 50)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A publication event applied after its article was withdrawn notifies nobody; once the article is
// published again, the event of that publication notifies its followers (the first announcement).
func TestNotificationRepository_SkipsArticlesWithdrawnBeforeTheEventIsApplied(t *testing.T) {
	t.Parallel()
	s := newNotifySetup(t)
	a := createArticle(t, s.e, articleOpts{Author: s.author})
	s.move(t, a, domain.StatusPublished, domain.StatusWithdrawn)
	if n := s.apply(t, "ev-publish", a); n != 0 {
		t.Fatalf("notified %d followers of a withdrawn article, want 0", n)
	}
	if got := s.list(t); len(got) != 0 {
		t.Fatalf("notifications %+v of a withdrawn article", got)
	}
	s.move(t, a, domain.StatusWithdrawn, domain.StatusPublished)
	if n := s.apply(t, "ev-republish", a); n != 1 {
		t.Fatalf("the publication applied while published notified %d, want 1", n)
	}
	// A draft's event (were one ever written) notifies nobody either.
	d := createArticle(t, s.e, articleOpts{Author: s.author, Status: domain.StatusDraft})
	if n := s.apply(t, "ev-draft", d); n != 0 {
		t.Fatalf("notified %d followers of a draft", n)
	}
}

// Withdraw/publish cycles notify each follower once per article, in whatever order the events of
// the cycles are applied.
func TestNotificationRepository_RepublishNotifiesNobodyAgain(t *testing.T) {
	t.Parallel()
	for _, order := range [][]string{{"ev-1", "ev-2", "ev-3"}, {"ev-3", "ev-1", "ev-2"}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			t.Parallel()
			s := newNotifySetup(t)
			a := createArticle(t, s.e, articleOpts{Author: s.author})
			for range 2 {
				s.move(t, a, domain.StatusPublished, domain.StatusWithdrawn)
				s.move(t, a, domain.StatusWithdrawn, domain.StatusPublished)
			}
			total := 0
			for _, ev := range order {
				total += s.apply(t, ev, a)
			}
			if got := s.list(t); total != 1 || len(got) != 1 {
				t.Fatalf("notified %d times, %d notifications; want one", total, len(got))
			}
		})
	}
}

// Twenty consumers applying twenty publication events of one article at once (each instance's
// consumer, redeliveries, cycles) notify its follower once.
func TestNotificationRepository_ConcurrentPublicationsAnnounceOnce(t *testing.T) {
	t.Parallel()
	s := newNotifySetup(t)
	a := createArticle(t, s.e, articleOpts{Author: s.author})
	const consumers = 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	counts := make([]int, consumers)
	errs := make([]error, consumers)
	for i := range consumers {
		wg.Go(func() {
			<-start
			counts[i], errs[i] = s.notes.NotifyFollowers(t.Context(), "notifications", fmt.Sprintf("ev-%d", i),
				domain.TopicArticlePublished, s.author.ID, a.ID, time.Time{})
		})
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range consumers {
		if errs[i] != nil {
			t.Fatalf("consumer %d: %v", i, errs[i])
		}
		total += counts[i]
	}
	if got := s.list(t); total != 1 || len(got) != 1 {
		t.Fatalf("notified %d times, %d notifications; want one", total, len(got))
	}
}

// A notification shows its article only while the reader may see it: a withdrawn article's
// notification keeps its place but shows neither the old title nor one typed since; published
// again, it shows the article as it is now.
func TestNotificationRepository_ListHidesArticlesNotPublishedNow(t *testing.T) {
	t.Parallel()
	s := newNotifySetup(t)
	shown := createArticle(t, s.e, articleOpts{Author: s.author, Title: "Still out"})
	hidden := createArticle(t, s.e, articleOpts{Author: s.author, Title: "Soon gone"})
	s.apply(t, "ev-shown", shown)
	s.apply(t, "ev-hidden", hidden)
	s.move(t, hidden, domain.StatusPublished, domain.StatusWithdrawn)
	if _, err := s.e.articles.Update(t.Context(), hidden.ID, func(a *domain.Article) error {
		a.Title = "Typed after withdrawing"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	bySlugs := func(got []domain.Notification) map[string]string {
		out := map[string]string{}
		for _, n := range got {
			out[n.ArticleSlug] = n.ArticleTitle
		}
		return out
	}
	got := s.list(t)
	if len(got) != 2 {
		t.Fatalf("%d notifications, want 2 (the hidden one keeps its place)", len(got))
	}
	titles := bySlugs(got)
	if _, leaked := titles[hidden.Slug]; leaked || titles[shown.Slug] != "Still out" {
		t.Fatalf("notifications show %v; want %s and one without article", titles, shown.Slug)
	}
	if title, ok := titles[""]; !ok || title != "" {
		t.Fatalf("notifications show %v; want one without article", titles)
	}
	for _, n := range got {
		if n.ArticleSlug == "" && (n.ArticleTitle != "" || n.ActorUsername != s.author.Username) {
			t.Fatalf("hidden article's notification %+v", n)
		}
	}
	s.move(t, hidden, domain.StatusWithdrawn, domain.StatusPublished)
	if titles := bySlugs(s.list(t)); titles[hidden.Slug] != "Typed after withdrawing" {
		t.Fatalf("republished: notifications show %v", titles)
	}
}
