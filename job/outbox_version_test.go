package job_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
)

// During a rolling upgrade the outbox stream carries entries relayed by both releases, with
// payloads written by both: the notifications consumer of this release must apply all of them
// (docs/OPERATIONS.md, "Upgrading a fleet"), and what this release writes must still be what the
// previous one reads (its reader ignores fields it does not know, so "v" is all that is added).

// oneEventOutbox hands one event to a relay and takes its "published" mark.
type oneEventOutbox struct{ ev domain.OutboxEvent }

func (o *oneEventOutbox) Claim(context.Context, string, int, time.Duration) ([]domain.OutboxEvent, error) {
	evs := []domain.OutboxEvent{o.ev}
	o.ev = domain.OutboxEvent{}
	if evs[0].ID == 0 {
		return nil, nil
	}
	return evs, nil
}
func (*oneEventOutbox) MarkPublished(context.Context, int64, int64) (bool, error) { return true, nil }
func (*oneEventOutbox) Release(context.Context, []domain.OutboxEvent, string) error {
	return nil
}
func (*oneEventOutbox) Redrive(context.Context, domain.RedrivePolicy, int) ([]domain.OutboxRedriven, error) {
	return nil, nil
}

// capturedEntries is a stream that keeps what is added to it.
type capturedEntries struct{ values []map[string]any }

func (c *capturedEntries) Add(_ context.Context, _ string, values map[string]any) error {
	c.values = append(c.values, values)
	return nil
}

// appliedEvents records what the consumer applied.
type appliedEvents struct{ ids []string }

func (a *appliedEvents) OnArticleEvent(_ context.Context, _, eventID, _ string, ev domain.ArticleEvent) error {
	a.ids = append(a.ids, fmt.Sprintf("%s:%d", eventID, ev.ArticleID))
	return nil
}

func TestRelay_WritesVersionedEntries(t *testing.T) {
	t.Parallel()
	payload, err := domain.EncodeArticleEvent(domain.ArticleEvent{ArticleID: 3, AuthorID: 2, Slug: "s", Title: "T"})
	if err != nil {
		t.Fatal(err)
	}
	stream := &capturedEntries{}
	r := job.NewRelay(&oneEventOutbox{ev: domain.OutboxEvent{ID: 7, Topic: domain.TopicArticlePublished, AggregateID: 3, Payload: payload, Generation: 1}},
		stream, job.RelayConfig{Stream: "s", Batch: 10, Lease: time.Minute, Poll: time.Hour}, "relay", time.Now, testenv.Logger(t))
	if n, err := r.RelayOnce(context.Background()); n != 1 || err != nil {
		t.Fatalf("RelayOnce = %d, %v", n, err)
	}
	if len(stream.values) != 1 || stream.values[0]["v"] != job.OutboxEntryVersion.String() {
		t.Fatalf("entries %v: want one with v=%s", stream.values, job.OutboxEntryVersion)
	}
	applied := &appliedEvents{}
	handle := job.NotificationsHandler(applied, testenv.Logger(t))
	if err := handle(context.Background(), []events.Message{{ID: "1-0", Values: stream.values[0]}}); err != nil || len(applied.ids) != 1 {
		t.Fatalf("the consumer applied %v (err %v) of its own release's entry", applied.ids, err)
	}
}

func TestNotificationsHandler_ReadsThisAndThePreviousVersion(t *testing.T) {
	t.Parallel()
	entries := []struct {
		name   string
		values map[string]any
		apply  bool
	}{
		// Exactly what v0.1.0 (2cc64c0) relays: no "v", a payload without one either.
		{"version 0 (v0.1.0)", map[string]any{"id": "outbox-1", "topic": domain.TopicArticlePublished, "aggregate": "11",
			"payload": `{"articleId":11,"authorId":2,"slug":"a","title":"A"}`}, true},
		// A relay of v0.1.0 publishing a payload this release wrote, and the other way round.
		{"version 0 entry, version 1 payload", map[string]any{"id": "outbox-2", "topic": domain.TopicArticlePublished, "aggregate": "12",
			"payload": `{"v":1,"articleId":12,"authorId":2,"slug":"b","title":"B"}`}, true},
		{"version 1 entry, version 0 payload", map[string]any{"v": "1", "id": "outbox-3", "topic": domain.TopicArticlePublished, "aggregate": "13",
			"payload": `{"articleId":13,"authorId":2,"slug":"c","title":"C"}`}, true},
		// A later release adds fields and keeps those this one reads.
		{"a later version", map[string]any{"v": "2", "id": "outbox-4", "topic": domain.TopicArticlePublished, "aggregate": "14",
			"payload": `{"v":2,"articleId":14,"authorId":2,"slug":"d","title":"D","extra":true}`, "partition": "7"}, true},
		{"an entry version that is no number", map[string]any{"v": "one", "id": "outbox-5", "topic": domain.TopicArticlePublished,
			"payload": `{"articleId":15}`}, false},
		{"a payload version too old", map[string]any{"v": "1", "id": "outbox-6", "topic": domain.TopicArticlePublished,
			"payload": `{"v":-1,"articleId":16}`}, false},
		{"no id", map[string]any{"v": "1", "topic": domain.TopicArticlePublished, "payload": `{"v":1,"articleId":17}`}, false},
	}
	var msgs []events.Message
	var want []string
	for i, e := range entries {
		msgs = append(msgs, events.Message{ID: fmt.Sprintf("%d-0", i+1), Values: e.values})
		if e.apply {
			want = append(want, fmt.Sprintf("%s:%d", e.values["id"], 11+i))
		}
	}
	applied := &appliedEvents{}
	if err := job.NotificationsHandler(applied, testenv.Logger(t))(context.Background(), msgs); err != nil {
		t.Fatalf("the batch failed: %v (an unreadable entry is skipped, not retried)", err)
	}
	if fmt.Sprint(applied.ids) != fmt.Sprint(want) {
		t.Fatalf("applied %v, want %v", applied.ids, want)
	}
}
