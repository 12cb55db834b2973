package webhooks_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/durable"
)

// allEvents is every event an endpoint may take.
var allEvents = domain.WebhookEvents

// article inserts a published article of author and returns its id.
func (e *env) article(t *testing.T, author int64, slug string) int64 {
	t.Helper()
	var id int64
	if err := e.pool.QueryRow(t.Context(), `INSERT INTO articles (slug, author_id, title, description, body, tag_list, status)
		VALUES ($1, $2, 'Title '||$1, 'About '||$1, '# Hello', '{zeta,alpha}', 'published') RETURNING id`, slug, author).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// articleEvent writes an article event the way the article repository does, in db.
func articleEvent(t *testing.T, db dao.DBTX, topic string, articleID, author int64) {
	t.Helper()
	if err := durable.WriteArticleEvent(t.Context(), dao.New(), db, topic, domain.Article{ID: articleID, AuthorID: author}); err != nil {
		t.Fatal(err)
	}
}

// delivered returns an endpoint's deliveries, oldest first.
func (e *env) delivered(t *testing.T, webhookID int64) []domain.WebhookDelivery {
	t.Helper()
	ds, err := e.store.Deliveries(t.Context(), webhookID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(ds)
	return ds
}

// The writes make the events themselves: an article event in the outbox, a comment on the
// owner's article (one statement for several, as the comment batcher writes them), a follow of
// the owner. Each body carries the resource as the API renders it to an anonymous reader.
func TestWebhookEvents_TheWritesMakeThem(t *testing.T) {
	t.Parallel()
	e := setup(t)
	owner, reader := e.user(t), e.user(t)
	w, err := e.store.Create(t.Context(), domain.Webhook{OwnerID: owner, URL: "https://h.example.com/", Events: allEvents}, []byte("enc"))
	if err != nil {
		t.Fatal(err)
	}
	art := e.article(t, owner, "hello-"+t.Name())
	articleEvent(t, e.pool, domain.TopicArticlePublished, art, owner)
	articleEvent(t, e.pool, domain.TopicArticleDeleted, art, owner) // not a webhook event
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO comments (article_id, seq, author_id, body) VALUES ($1, 1, $2, 'first'), ($1, 2, $2, 'second')`,
		art, reader); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO follows (follower_id, followee_id) VALUES ($1, $2)`, reader, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO follows (follower_id, followee_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, reader, owner); err != nil {
		t.Fatal(err) // following twice is one follow: no second event
	}
	// Someone else's article: not this endpoint's.
	articleEvent(t, e.pool, domain.TopicArticlePublished, e.article(t, reader, "other-"+t.Name()), reader)

	ds := e.delivered(t, w.ID)
	var types []string
	for _, d := range ds {
		types = append(types, d.EventType)
	}
	want := []string{domain.WebhookArticlePublished, domain.WebhookCommentCreated, domain.WebhookCommentCreated, domain.WebhookFollowerAdded}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	var published struct {
		Type string `json:"type"`
		Data struct {
			Article map[string]any `json:"article"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(ds[0].Body), &published); err != nil {
		t.Fatal(err)
	}
	a := published.Data.Article
	if published.Type != domain.WebhookArticlePublished || a["slug"] != "hello-"+t.Name() || a["body"] != "# Hello" || a["favorited"] != false ||
		a["author"].(map[string]any)["following"] != false || a["status"] != "published" {
		t.Fatalf("article body %s", ds[0].Body)
	}
	if tags := a["tagList"].([]any); len(tags) != 2 || tags[0] != "alpha" {
		t.Fatalf("tagList %v, want sorted as the API sorts it", tags)
	}
	if _, ok := a["coverImage"]; ok {
		t.Fatal("coverImage present on an article without one (the API leaves it out)")
	}
	var comment struct {
		Data struct {
			Comment struct {
				Body     string         `json:"body"`
				Author   map[string]any `json:"author"`
				ParentID *int64         `json:"parentId"`
			} `json:"comment"`
			Article struct {
				Slug string `json:"slug"`
			} `json:"article"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(ds[2].Body), &comment); err != nil {
		t.Fatal(err)
	}
	if c := comment.Data; c.Comment.Body != "second" || c.Comment.ParentID != nil || c.Article.Slug != "hello-"+t.Name() || c.Comment.Author["username"] == "" {
		t.Fatalf("comment body %s", ds[2].Body)
	}
	var follow struct {
		Data struct {
			Follower map[string]any `json:"follower"`
			Profile  map[string]any `json:"profile"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(ds[3].Body), &follow); err != nil {
		t.Fatal(err)
	}
	if follow.Data.Follower["username"] == "" || follow.Data.Profile["username"] == follow.Data.Follower["username"] {
		t.Fatalf("follow body %s", ds[3].Body)
	}
	if got := e.jobs(t); !slices.Equal(got, []int64{ds[0].ID}) {
		t.Fatalf("jobs for deliveries %v, want the head's only (%d)", got, ds[0].ID)
	}
}

// With no endpoint that takes it, a write adds nothing; the site's endpoints take every event.
func TestWebhookEvents_SiteEndpointsTakeEveryAuthors(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a, b := e.user(t), e.user(t)
	art := e.article(t, a, "quiet-"+t.Name())
	articleEvent(t, e.pool, domain.TopicArticlePublished, art, a)
	var n int
	if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM webhook_deliveries`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d deliveries with no endpoint (%v)", n, err)
	}
	site, err := e.store.Create(t.Context(), domain.Webhook{URL: "https://site.example.com/", Events: allEvents}, []byte("enc"))
	if err != nil {
		t.Fatal(err)
	}
	articleEvent(t, e.pool, domain.TopicArticleWithdrawn, art, a)
	articleEvent(t, e.pool, domain.TopicArticlePublished, e.article(t, b, "other-"+t.Name()), b)
	if ds := e.delivered(t, site.ID); len(ds) != 2 || ds[0].EventType != domain.WebhookArticleWithdrawn {
		t.Fatalf("site deliveries %+v", ds)
	}
}

// backendPID returns the server process of a transaction.
func backendPID(t *testing.T, tx pgx.Tx) (pid int) {
	t.Helper()
	if err := tx.QueryRow(t.Context(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitUntilLockWaits returns once the server process pid waits for a lock (the interleaving the
// test needs: the database tells us, no sleep guesses it).
func (e *env) waitUntilLockWaits(t *testing.T, pid int) {
	t.Helper()
	for {
		var waiting bool
		if err := e.pool.QueryRow(t.Context(), `SELECT COALESCE(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		if t.Context().Err() != nil {
			t.Fatal("the second write never waited for the endpoint's lock")
		}
	}
}

// Two writes on different instances making events for one endpoint at once: the one that numbers
// its delivery first holds the endpoint's row until it commits, so numbers follow commit order,
// and the second sees the first's pending delivery ahead of it (no second job: one delivery in
// flight per endpoint). If the first rolls back, the second is the head and gets the job.
func TestWebhookEvents_NumberedInCommitOrder(t *testing.T) {
	t.Parallel()
	for _, firstCommits := range []bool{true, false} {
		name := map[bool]string{true: "first commits", false: "first rolls back"}[firstCommits]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			owner := e.user(t)
			w, err := e.store.Create(t.Context(), domain.Webhook{OwnerID: owner, URL: "https://h.example.com/", Events: allEvents}, []byte("enc"))
			if err != nil {
				t.Fatal(err)
			}
			art := e.article(t, owner, "race-"+t.Name())
			first, err := e.pool.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = first.Rollback(context.Background()) }()
			second, err := e.pool.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = second.Rollback(context.Background()) }()
			secondPID := backendPID(t, second)

			articleEvent(t, first, domain.TopicArticlePublished, art, owner)
			done := make(chan error, 1)
			go func() {
				err := durable.WriteArticleEvent(t.Context(), dao.New(), second, domain.TopicArticleUpdated, domain.Article{ID: art, AuthorID: owner})
				if err == nil {
					err = second.Commit(t.Context())
				}
				done <- err
			}()
			e.waitUntilLockWaits(t, secondPID)
			if firstCommits {
				err = first.Commit(t.Context())
			} else {
				err = first.Rollback(t.Context())
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}

			ds := e.delivered(t, w.ID)
			jobs := e.jobs(t)
			if firstCommits {
				if len(ds) != 2 || ds[0].EventType != domain.WebhookArticlePublished || ds[0].Seq >= ds[1].Seq {
					t.Fatalf("deliveries %+v, want the first commit's first", ds)
				}
				if !slices.Equal(jobs, []int64{ds[0].ID}) {
					t.Fatalf("jobs %v, want the first delivery's only", jobs)
				}
				return
			}
			if len(ds) != 1 || ds[0].EventType != domain.WebhookArticleUpdated || !slices.Equal(jobs, []int64{ds[0].ID}) {
				t.Fatalf("deliveries %+v, jobs %v: want the second's, with its job", ds, jobs)
			}
		})
	}
}
