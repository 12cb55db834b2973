package job_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
)

// redriveWorld is one author with three followers, an outbox relay whose stream lives on a
// private redis-server (stopped and started empty by the tests) and the notifications consumer on
// that stream, each run by hand: every step of the interleaving is the test's.
type redriveWorld struct {
	e         *queueEnv
	srv       *testenv.RedisServer
	stream    string
	relay     *job.Relay
	consumer  *events.Consumer
	policy    domain.RedrivePolicy
	repo      *repository.ArticleRepository
	followers []int64
	article   int64
}

func newRedriveWorld(t *testing.T, policy domain.RedrivePolicy, applier job.ArticleEventApplier) *redriveWorld {
	t.Helper()
	e := newQueueEnv(t, 6)
	srv := testenv.StartRedisServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	caches := testenv.NewRedis(t) // the article caches stay on the shared Redis: only the stream restarts
	log := testenv.Logger(t)
	ctx := context.Background()
	w := &redriveWorld{e: e, srv: srv, stream: "stream:outbox", policy: policy}
	outbox := durable.NewOutbox(pg.SessionPool{Pool: e.pool}, dao.New())
	if applier == nil {
		applier = service.NewNotificationService(repository.NewNotificationRepository(e.pool, dao.New()))
	}
	w.relay = job.NewRelay(outbox, events.NewStreamWriter(rdb), job.RelayConfig{
		Stream: w.stream, Batch: 10, Lease: time.Minute, Poll: time.Hour, Redrive: policy,
	}, "relay", time.Now, log)
	w.consumer = events.NewConsumer(rdb, events.ConsumerConfig{
		Stream: w.stream, Group: job.GroupNotifications, Name: "consumer", BatchSize: 10, BatchWait: 20 * time.Millisecond,
		ClaimIdle: 0, Retry: domain.RetryPolicy{MaxAttempts: 2}, Backoff: time.Millisecond,
	}, job.NotificationsHandler(applier, log), log)
	w.repo = repository.NewArticleRepository(e.pool, dao.New(),
		cache.NewArticleCache(caches.Client, cache.Keyspace(caches.Prefix), outboxCachePolicy, nil, log),
		cache.NewAuthorPageCache(caches.Client, cache.Keyspace(caches.Prefix), outboxCachePolicy),
		cache.NewListPageCache(caches.Client, cache.Keyspace(caches.Prefix), outboxCachePolicy, log),
		cache.NewTagsCache(caches.Client, cache.Keyspace(caches.Prefix), outboxCachePolicy, log), search.Language("english"), log, nil)

	var author int64
	if err := e.pool.QueryRow(ctx, `INSERT INTO users (email, username, password_hash) VALUES ('a@example.com', 'author', 'x') RETURNING id`).Scan(&author); err != nil {
		t.Fatal(err)
	}
	rows, err := e.pool.Query(ctx, `INSERT INTO users (email, username, password_hash)
		SELECT 'f' || g || '@example.com', 'f' || g, 'x' FROM generate_series(1, 3) g RETURNING id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		w.followers = append(w.followers, id)
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO follows (follower_id, followee_id) SELECT unnest($1::bigint[]), $2`, w.followers, author); err != nil {
		t.Fatal(err)
	}
	if err := e.pool.QueryRow(ctx, `INSERT INTO articles (slug, author_id, title, description, body, status)
		VALUES ('redrive', $1, 'Redrive', 'd', 'b', 'draft') RETURNING id`, author).Scan(&w.article); err != nil {
		t.Fatal(err)
	}
	return w
}

// publish publishes the article through the repository (its outbox event in the same unit of
// work) and returns the event's outbox id.
func (w *redriveWorld) publish(t *testing.T) int64 {
	t.Helper()
	if _, err := w.repo.Transition(context.Background(), w.article, []domain.ArticleStatus{domain.StatusDraft}, domain.StatusPublished); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := w.e.pool.QueryRow(context.Background(), `SELECT max(id) FROM outbox`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// age moves the event's timestamps back by d: for the outbox (on PostgreSQL's clock), d passed.
func (w *redriveWorld) age(t *testing.T, id int64, d time.Duration) {
	t.Helper()
	if _, err := w.e.pool.Exec(context.Background(), `UPDATE outbox SET
		published_at = published_at - $2::float8 * interval '1 second',
		next_attempt_at = next_attempt_at - $2::float8 * interval '1 second' WHERE id = $1`, id, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

func (w *redriveWorld) relayOnce(t *testing.T, want int) {
	t.Helper()
	if n, err := w.relay.RelayOnce(context.Background()); err != nil || n != want {
		t.Fatalf("relay pass: %d events, %v; want %d", n, err, want)
	}
}

func (w *redriveWorld) redriveOnce(t *testing.T, want int) {
	t.Helper()
	if n, err := w.relay.RedriveOnce(context.Background()); err != nil || n != want {
		t.Fatalf("re-drive pass: %d events, %v; want %d", n, err, want)
	}
}

func (w *redriveWorld) consumeOnce(t *testing.T) {
	t.Helper()
	if err := w.consumer.Once(context.Background()); err != nil {
		t.Fatalf("consumer round: %v", err)
	}
}

// notified returns how many notifications of the article each follower has.
func (w *redriveWorld) notified(t *testing.T) []int64 {
	t.Helper()
	out := make([]int64, len(w.followers))
	for i, f := range w.followers {
		out[i] = w.e.count(t, `SELECT count(*) FROM notifications WHERE user_id = $1 AND article_id = $2`, f, w.article)
	}
	return out
}

func (w *redriveWorld) status(t *testing.T, id int64) (string, int64) {
	t.Helper()
	var status string
	var attempts int64
	if err := w.e.pool.QueryRow(context.Background(), `SELECT status, attempts FROM outbox WHERE id = $1`, id).Scan(&status, &attempts); err != nil {
		t.Fatal(err)
	}
	return status, attempts
}

func allEqual(ns []int64, want int64) bool {
	for _, n := range ns {
		if n != want {
			return false
		}
	}
	return true
}

var redrivePolicy = domain.RedrivePolicy{After: 2 * time.Minute, Retry: domain.RetryPolicy{MaxAttempts: 3, Base: 10 * time.Second, Max: time.Minute}}

// TestOutbox_RedisRestartsEmptyBetweenRelayAndConsumer: an article with three followers is
// published; the relay moves its event to the stream; Redis is then killed before the consumer
// read it and comes back empty (no persistence), so the stream entry is gone. Nothing reaches
// the followers until the redelivery window has passed; then the re-drive makes the event
// pending, the relay publishes it to the new stream, the consumer applies it, and each follower
// is notified exactly once. Further passes change nothing.
func TestOutbox_RedisRestartsEmptyBetweenRelayAndConsumer(t *testing.T) {
	t.Parallel()
	w := newRedriveWorld(t, redrivePolicy, nil)
	id := w.publish(t)
	w.relayOnce(t, 1)
	if st, _ := w.status(t, id); st != "published" {
		t.Fatalf("after the relay: %s", st)
	}

	w.srv.Stop()
	w.srv.Start() // empty: the test server keeps nothing on disk

	w.consumeOnce(t)
	if got := w.notified(t); !allEqual(got, 0) {
		t.Fatalf("notified %v from an empty stream", got)
	}
	w.redriveOnce(t, 0) // inside the window: the consumer may yet apply it
	w.age(t, id, redrivePolicy.After+time.Second)
	w.redriveOnce(t, 1)
	if st, attempts := w.status(t, id); st != "pending" || attempts != 1 {
		t.Fatalf("after the re-drive: %s, %d attempts", st, attempts)
	}
	w.relayOnce(t, 0) // its backoff first
	w.age(t, id, redrivePolicy.Retry.Base)
	w.relayOnce(t, 1)
	w.consumeOnce(t)
	if got := w.notified(t); !allEqual(got, 1) {
		t.Fatalf("notified %v after the re-drive, want each follower once", got)
	}
	if st, _ := w.status(t, id); st != "applied" {
		t.Fatalf("after the consumer: %s", st)
	}
	w.age(t, id, time.Hour)
	w.redriveOnce(t, 0)
	w.relayOnce(t, 0)
	w.consumeOnce(t)
	if got := w.notified(t); !allEqual(got, 1) {
		t.Fatalf("notified %v at the end", got)
	}
	if w.relay.Stats.Redriven.Load() != 1 || w.relay.Stats.Published.Load() != 2 {
		t.Fatalf("relay stats: %d re-driven, %d published", w.relay.Stats.Redriven.Load(), w.relay.Stats.Published.Load())
	}
}

// TestOutbox_RedriveOfAnAppliedEventIsANoOp: the consumer applied the event, but a re-drive ran
// anyway (it took the row just before the consumer's commit marked it applied: forced here by
// putting the row back to published). The event is published and delivered a second time; the
// consumer's inbox makes that a no-op, and the row ends applied.
func TestOutbox_RedriveOfAnAppliedEventIsANoOp(t *testing.T) {
	t.Parallel()
	w := newRedriveWorld(t, redrivePolicy, nil)
	id := w.publish(t)
	w.relayOnce(t, 1)
	w.consumeOnce(t)
	if got := w.notified(t); !allEqual(got, 1) {
		t.Fatalf("notified %v", got)
	}
	if _, err := w.e.pool.Exec(context.Background(), `UPDATE outbox SET status = 'published' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	w.age(t, id, redrivePolicy.After+time.Second)
	w.redriveOnce(t, 1)
	w.age(t, id, redrivePolicy.Retry.Base)
	w.relayOnce(t, 1)
	w.consumeOnce(t)
	if got := w.notified(t); !allEqual(got, 1) {
		t.Fatalf("notified %v after a re-drive of an applied event, want still once each", got)
	}
	if st, _ := w.status(t, id); st != "applied" {
		t.Fatalf("status %s", st)
	}
	if n := w.e.count(t, `SELECT count(*) FROM inbox WHERE consumer = $1`, job.GroupNotifications); n != 1 {
		t.Fatalf("%d inbox rows", n)
	}
}

// failingApplier never applies anything.
type failingApplier struct{}

func (failingApplier) OnArticleEvent(context.Context, string, string, string, domain.ArticleEvent) error {
	return errors.New("the notification store refuses this event")
}

// TestOutbox_AnEventThatNeverAppliesEndsDead: the consumer's dead letter and the outbox's
// re-drive agree. Each publication of the event is delivered until the consumer's bound, then
// dead-lettered (the outbox row stays published, unapplied); each re-drive is one attempt; the
// last one makes the row dead, and nothing delivers it again: no loop.
func TestOutbox_AnEventThatNeverAppliesEndsDead(t *testing.T) {
	t.Parallel()
	w := newRedriveWorld(t, redrivePolicy, failingApplier{})
	id := w.publish(t)
	for attempt := int64(1); ; attempt++ {
		w.relayOnce(t, 1)
		for range 4 { // a read and a reclaim fail as batches, the next reclaim is its last try, then nothing is left
			w.consumeOnce(t)
		}
		if dl := w.consumer.Stats.DeadLettered.Load(); dl != attempt {
			t.Fatalf("publication %d: %d entries dead-lettered", attempt, dl)
		}
		w.age(t, id, redrivePolicy.After+time.Second)
		if attempt == int64(redrivePolicy.Retry.MaxAttempts) {
			w.redriveOnce(t, 0)
			break
		}
		w.redriveOnce(t, 1)
		w.age(t, id, redrivePolicy.Retry.Max)
	}
	if st, attempts := w.status(t, id); st != "dead" || attempts != int64(redrivePolicy.Retry.MaxAttempts) {
		t.Fatalf("at the end: %s after %d attempts", st, attempts)
	}
	if w.relay.Stats.Dead.Load() != 1 {
		t.Fatalf("%d deaths counted", w.relay.Stats.Dead.Load())
	}
	w.age(t, id, time.Hour)
	w.redriveOnce(t, 0)
	w.relayOnce(t, 0)
	w.consumeOnce(t)
	if n := w.consumer.Stats.DeadLettered.Load(); n != int64(redrivePolicy.Retry.MaxAttempts) {
		t.Fatalf("%d entries dead-lettered, want one per publication (%d)", n, redrivePolicy.Retry.MaxAttempts)
	}
}
