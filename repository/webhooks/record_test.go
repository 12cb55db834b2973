package webhooks_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// A 2xx attempt is recorded in one call (webhook_record_success) while another transaction is
// numbering the endpoint's next delivery (webhook_emit holds the endpoint's row until it commits,
// and found the recorded delivery still pending: no job for its own). The record waits for the
// lock, then must see the new delivery and enqueue its job; a snapshot taken before the lock
// would miss it and leave the endpoint stalled. The database says when the record waits.
func TestWebhooks_SuccessSeesTheDeliveryNumberedMeanwhile(t *testing.T) {
	t.Parallel()
	e := setup(t)
	owner := e.user(t)
	w, err := e.store.Create(t.Context(), domain.Webhook{OwnerID: owner, URL: "https://h.example.com/", Events: allEvents}, []byte("enc"))
	if err != nil {
		t.Fatal(err)
	}
	if n := e.emit(t, domain.WebhookArticlePublished, owner, "outbox-1"); n != 1 {
		t.Fatalf("first event: %d deliveries", n)
	}
	head := e.delivered(t, w.ID)[0]

	numbering, err := e.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = numbering.Rollback(context.Background()) }()
	if _, err := numbering.Exec(t.Context(), `SELECT webhook_emit($1, $2, 'outbox-2', '{}'::json, NULL)`, domain.WebhookArticleUpdated, owner); err != nil {
		t.Fatal(err)
	}
	recorded := make(chan error, 1)
	go func() {
		res, err := e.store.Record(t.Context(), domain.WebhookAttempt{DeliveryID: head.ID, WebhookID: w.ID, At: time.Now(),
			Answer: domain.WebhookAnswer{StatusCode: 204}})
		if err == nil && res.Status != domain.WebhookDelivered {
			t.Errorf("status %s, want delivered", res.Status)
		}
		recorded <- err
	}()
	e.waitUntilAnyLockWaits(t)
	if err := numbering.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-recorded; err != nil {
		t.Fatal(err)
	}
	ds := e.delivered(t, w.ID)
	if len(ds) != 2 {
		t.Fatalf("deliveries %+v, want 2", ds)
	}
	if jobs := e.jobs(t); !slices.Equal(jobs, []int64{head.ID, ds[1].ID}) {
		t.Fatalf("jobs for deliveries %v, want the head's and then the delivery numbered meanwhile (%d)", jobs, ds[1].ID)
	}
}

// waitUntilAnyLockWaits returns once some session of the test's database waits for a lock.
func (e *env) waitUntilAnyLockWaits(t *testing.T) {
	t.Helper()
	for {
		var waiting bool
		if err := e.pool.QueryRow(t.Context(), `SELECT COALESCE(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity WHERE datname = current_database()`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		if t.Context().Err() != nil {
			t.Fatal("the record never waited for the endpoint's lock")
		}
	}
}
