package repository_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestOutbox_ArticleEventsCarryTheirVersion: the payload a write puts in the outbox carries the
// schema version its consumers check (domain.ArticleEventVersion), and reads back as the event.
func TestOutbox_ArticleEventsCarryTheirVersion(t *testing.T) {
	t.Parallel()
	e := setup(t, testenv.NewDB(t), envOpts{})
	a := createArticle(t, e, articleOpts{})
	var payload []byte
	if err := e.pool.QueryRow(context.Background(), `SELECT payload FROM outbox WHERE aggregate_id = $1 AND topic = $2`,
		a.ID, domain.TopicArticlePublished).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(payload, &fields); err != nil || fields["v"] != float64(domain.ArticleEventVersion) {
		t.Fatalf("payload %s (%v): want v %d", payload, err, domain.ArticleEventVersion)
	}
	ev, err := domain.DecodeArticleEvent(payload)
	if err != nil || ev.ArticleID != a.ID || ev.AuthorID != a.AuthorID || ev.Slug != a.Slug || ev.Title != a.Title {
		t.Fatalf("DecodeArticleEvent(%s) = %+v, %v; want the article's event", payload, ev, err)
	}
}
