package webhooks_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestWebhooks_CapPerOwner(t *testing.T) {
	t.Parallel()
	e := setup(t)
	owner := e.user(t)
	var wg sync.WaitGroup
	errs := make(chan error, domain.MaxWebhooksPerOwner+5)
	for i := range domain.MaxWebhooksPerOwner + 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.store.Create(t.Context(), domain.Webhook{OwnerID: owner, URL: fmt.Sprintf("https://h%d.example.com/", i),
				Events: []string{domain.WebhookArticlePublished}}, []byte("enc"))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	refused := 0
	for err := range errs {
		var v *domain.ValidationError
		if errors.As(err, &v) {
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if list, _ := e.store.List(t.Context(), owner); len(list) != domain.MaxWebhooksPerOwner || refused != 5 {
		t.Fatalf("%d endpoints, %d refused; want %d and 5", len(list), refused, domain.MaxWebhooksPerOwner)
	}
}

// An endpoint's deliveries have one job at a time, the lowest pending one's; finishing it
// (delivered or dead) enqueues the next. The same event twice adds nothing.
func TestWebhooks_InOrderPerEndpoint(t *testing.T) {
	t.Parallel()
	e := setup(t)
	owner, other := e.user(t), e.user(t)
	w, err := e.store.Create(t.Context(), domain.Webhook{OwnerID: owner, URL: "https://h.example.com/", Events: []string{domain.WebhookArticlePublished}}, []byte("enc"))
	if err != nil {
		t.Fatal(err)
	}
	site, err := e.store.Create(t.Context(), domain.Webhook{URL: "https://site.example.com/", Events: []string{domain.WebhookArticlePublished}}, []byte("enc"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if n := e.emit(t, domain.WebhookArticlePublished, owner, fmt.Sprintf("outbox-%d", i)); n != 2 {
			t.Fatalf("event %d reached %d endpoints; want the owner's and the site's", i, n)
		}
	}
	if n := e.emit(t, domain.WebhookArticlePublished, owner, "outbox-0"); n != 0 {
		t.Fatalf("a repeated event added %d deliveries", n)
	}
	if n := e.emit(t, domain.WebhookArticlePublished, other, "outbox-9"); n != 1 {
		t.Fatalf("another author's event reached %d endpoints, want the site's only", n)
	}
	mine, _ := e.store.Deliveries(t.Context(), w.ID, 0, 10)
	if len(mine) != 3 || mine[0].Seq <= mine[1].Seq {
		t.Fatalf("deliveries %+v, want 3 newest first", mine)
	}
	first, second, third := mine[2], mine[1], mine[0]
	siteDs, _ := e.store.Deliveries(t.Context(), site.ID, 0, 10)
	if got := e.jobs(t); !slices.Equal(got, []int64{first.ID, siteDs[len(siteDs)-1].ID}) {
		t.Fatalf("jobs for deliveries %v, want the head of each endpoint only", got)
	}

	if d, hook, enc, err := e.store.ForAttempt(t.Context(), first.ID); err != nil || d.ID != first.ID || hook.URL != w.URL || !hook.Active || string(enc) != "enc" {
		t.Fatalf("ForAttempt: %+v %+v %q %v", d, hook, enc, err)
	}

	now := time.Now()
	res, err := e.store.Record(t.Context(), domain.WebhookAttempt{DeliveryID: first.ID, WebhookID: w.ID, At: now,
		Answer: domain.WebhookAnswer{StatusCode: 500, Body: []byte("boom")}})
	if err != nil || res.Status != domain.WebhookPending {
		t.Fatalf("failed attempt: %+v, %v", res, err)
	}
	if got := e.jobs(t); len(got) != 2 {
		t.Fatalf("a retried delivery let the next one go: jobs %v", got)
	}
	if res, err = e.store.Record(t.Context(), domain.WebhookAttempt{DeliveryID: first.ID, WebhookID: w.ID, At: now, Last: true,
		Answer: domain.WebhookAnswer{StatusCode: 500}}); err != nil || res.Status != domain.WebhookDead {
		t.Fatalf("last attempt: %+v, %v", res, err)
	}
	if got := e.jobs(t); !slices.Contains(got, second.ID) || slices.Contains(got, third.ID) {
		t.Fatalf("after the first died, jobs %v; want the second's, not the third's", got)
	}
	if res, err = e.store.Record(t.Context(), domain.WebhookAttempt{DeliveryID: second.ID, WebhookID: w.ID, At: now,
		Answer: domain.WebhookAnswer{StatusCode: 204}}); err != nil || res.Status != domain.WebhookDelivered {
		t.Fatalf("delivered: %+v, %v", res, err)
	}
	if got := e.jobs(t); !slices.Contains(got, third.ID) {
		t.Fatalf("after the second, jobs %v; want the third's", got)
	}
	d, _ := e.store.Delivery(t.Context(), first.ID)
	if d.Attempts != 2 || d.StatusCode != 500 || d.Error != "answered 500" {
		t.Fatalf("first delivery %+v", d)
	}
	if got, _, _ := e.store.Get(t.Context(), w.ID); got.FailingSince != nil {
		t.Fatalf("a success left the endpoint failing since %v", got.FailingSince)
	}
}

// An endpoint that fails for 3 days (by the recorded attempts' clock) is disabled, its delivery
// dead, and its owner notified once.
func TestWebhooks_DisabledAfterThreeDaysOfFailures(t *testing.T) {
	t.Parallel()
	e := setup(t)
	owner := e.user(t)
	w, _ := e.store.Create(t.Context(), domain.Webhook{OwnerID: owner, URL: "https://h.example.com/", Events: []string{domain.WebhookArticlePublished}}, []byte("enc"))
	for i := range 2 {
		e.emit(t, domain.WebhookArticlePublished, owner, fmt.Sprintf("outbox-%d", i))
	}
	ds, _ := e.store.Deliveries(t.Context(), w.ID, 0, 10)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := func(at time.Time) domain.WebhookAttemptResult {
		res, err := e.store.Record(t.Context(), domain.WebhookAttempt{DeliveryID: ds[1].ID, WebhookID: w.ID, At: at,
			Answer: domain.WebhookAnswer{Err: errors.New("connection refused")}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := fail(start); res.Disabled {
		t.Fatal("disabled at once")
	}
	if res := fail(start.Add(71 * time.Hour)); res.Disabled {
		t.Fatal("disabled before 3 days")
	}
	if res := fail(start.Add(72 * time.Hour)); !res.Disabled || res.Status != domain.WebhookDead {
		t.Fatalf("after 3 days: %+v", res)
	}
	got, _, _ := e.store.Get(t.Context(), w.ID)
	if got.Active {
		t.Fatal("still active")
	}
	var n int
	_ = e.pool.QueryRow(t.Context(), `SELECT count(*) FROM notifications WHERE user_id = $1 AND kind = 'webhook.disabled'`, owner).Scan(&n)
	if n != 1 {
		t.Fatalf("%d notices, want 1", n)
	}
	// The next delivery's job runs and ends it unattempted.
	if err := e.store.Skip(t.Context(), w.ID, ds[0].ID, "the endpoint is disabled"); err != nil {
		t.Fatal(err)
	}
	if d, _ := e.store.Delivery(t.Context(), ds[0].ID); d.Status != domain.WebhookDead {
		t.Fatalf("next delivery %+v", d)
	}
	if n := e.emit(t, domain.WebhookArticlePublished, owner, "outbox-7"); n != 0 {
		t.Fatal("a disabled endpoint got a delivery")
	}
}
