package job_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
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

// ---- relay wrappers that kill their relay at chosen points ------------------------------------

// killingAdder is the real stream writer, with the relay killed before an XADD (nothing written)
// or right after one (written, not yet marked published).
type killingAdder struct {
	next  job.StreamAdder
	life  *workerLife
	kills *killSchedule
	onAdd func(id string)
}

func (a *killingAdder) Add(ctx context.Context, stream string, values map[string]any) error {
	if a.kills.strike("relay: before XADD") {
		a.life.kill()
		return ctx.Err()
	}
	if err := a.next.Add(ctx, stream, values); err != nil {
		return err
	}
	a.onAdd(values["id"].(string))
	if a.kills.strike("relay: after XADD, before mark") {
		a.life.kill()
	}
	return nil
}

// killingOutbox is the real outbox, with the relay killed right after a claim or a mark.
type killingOutbox struct {
	next  job.OutboxStore
	life  *workerLife
	kills *killSchedule
}

func (o *killingOutbox) Claim(ctx context.Context, owner string, n int, lease time.Duration) ([]domain.OutboxEvent, error) {
	evs, err := o.next.Claim(ctx, owner, n, lease)
	if err == nil && len(evs) > 0 && o.kills.strike("relay: after claim") {
		o.life.kill()
	}
	return evs, err
}

func (o *killingOutbox) MarkPublished(ctx context.Context, id, generation int64) (bool, error) {
	ok, err := o.next.MarkPublished(ctx, id, generation)
	if err == nil && o.kills.strike("relay: after mark") {
		o.life.kill()
	}
	return ok, err
}

func (o *killingOutbox) Release(ctx context.Context, evs []domain.OutboxEvent, cause string) error {
	return o.next.Release(ctx, evs, cause)
}

func (o *killingOutbox) Redrive(ctx context.Context, p domain.RedrivePolicy, n int) ([]domain.OutboxRedriven, error) {
	return o.next.Redrive(ctx, p, n)
}

// expireOutboxLeases ends owner's outbox leases now, on PostgreSQL's clock (which the claim
// compares them with), as their running out would.
func expireOutboxLeases(t testing.TB, e *queueEnv, owner string) {
	if _, err := e.pool.Exec(context.Background(), `UPDATE outbox SET lease_until = now() - interval '1 millisecond' WHERE lease_owner = $1`, owner); err != nil {
		t.Error(err)
	}
}

// killingApplier is the notification service, with its consumer killed right after it applied an
// event — in the middle of a batch, before the batch is acknowledged.
type killingApplier struct {
	next  job.ArticleEventApplier
	life  *workerLife
	kills *killSchedule
}

func (a *killingApplier) OnArticleEvent(ctx context.Context, consumer, eventID, topic string, ev domain.ArticleEvent) error {
	if err := a.next.OnArticleEvent(ctx, consumer, eventID, topic, ev); err != nil {
		return err
	}
	if a.kills.strike("consumer: mid-batch") {
		a.life.kill()
		return ctx.Err()
	}
	return nil
}

// supervise runs one incarnation of a worker after another until ctx ends; a killed worker comes
// back at once as the next life.
func supervise(ctx context.Context, wg *sync.WaitGroup, lives *atomic.Int64, run func(ctx context.Context, l *workerLife, n int)) {
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; n++ {
			lctx, cancel := context.WithCancel(ctx)
			l := &workerLife{cancel: cancel}
			lives.Add(1)
			run(lctx, l, n)
			cancel()
		}
	})
}

// TestOutbox_PublishesSurviveKilledRelaysAndConsumers publishes 1,000 articles (and withdraws 50)
// through the real repository, so each change writes its outbox event in its own transaction,
// while three relays and two notification consumers are killed at random points and restarted:
// relays right after a claim, before an XADD, after an XADD but before marking the event, after
// marking it; consumers before applying a batch, in the middle of one, and after applying it but
// before XACK. Every event must reach the stream at least once, and every follower of an author
// must end up with exactly one notification per article the author published.
func TestOutbox_PublishesSurviveKilledRelaysAndConsumers(t *testing.T) {
	t.Parallel()
	const (
		authors       = 10
		followers     = 20
		perAuthor     = 4 // followers of each author
		articles      = 1000
		withdrawn     = 50
		relays        = 3
		consumers     = 2
		relayLease    = time.Minute // ended in the database at every relay kill
		consumerClaim = 100 * time.Millisecond
	)
	e := newQueueEnv(t, 24)
	rds := testenv.NewRedis(t)
	ctx := context.Background()
	log := testenv.Logger(t)
	stream := rds.Prefix + "stream:outbox"

	// People: authors 1..10 and followers 11..30; each author has four distinct followers.
	var userIDs []int64
	rows, err := e.pool.Query(ctx, `INSERT INTO users (email, username, password_hash)
		SELECT 'u' || g || '@example.com', 'u' || g, 'x' FROM generate_series(1, $1::int) g RETURNING id`, authors+followers)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		userIDs = append(userIDs, id)
	}
	if rows.Err() != nil || len(userIDs) != authors+followers {
		t.Fatalf("users: %v (%d)", rows.Err(), len(userIDs))
	}
	var followerIDs, followeeIDs []int64
	for a := range authors {
		for j := range perAuthor {
			followeeIDs = append(followeeIDs, userIDs[a])
			followerIDs = append(followerIDs, userIDs[authors+(a+j*5)%followers])
		}
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO follows (follower_id, followee_id) SELECT * FROM unnest($1::bigint[], $2::bigint[])`,
		followerIDs, followeeIDs); err != nil {
		t.Fatal(err)
	}
	// Drafts, straight into the table: publishing them is what is under test.
	var articleIDs []int64
	rows, err = e.pool.Query(ctx, `INSERT INTO articles (slug, author_id, title, description, body, status)
		SELECT 'article-' || g, ($2::bigint[])[1 + g % $3::int], 'Article ' || g, 'd', 'b', 'draft'
		FROM generate_series(1, $1::int) g RETURNING id`, articles, userIDs[:authors], authors)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		articleIDs = append(articleIDs, id)
	}
	if rows.Err() != nil || len(articleIDs) != articles {
		t.Fatalf("articles: %v (%d)", rows.Err(), len(articleIDs))
	}

	seed := time.Now().UnixNano()
	t.Logf("chaos seed %d", seed)
	kills := &killSchedule{rnd: rand.New(rand.NewPCG(uint64(seed), 0x6f7574)), p: 0.01, budget: 120, kills: map[string]int{}}
	// Consumers see far fewer batches than relays see events: they die more readily per batch.
	batchKills := &killSchedule{rnd: rand.New(rand.NewPCG(uint64(seed), 0x626174)), p: 0.05, budget: 40, kills: map[string]int{}}
	clock := newQueueClock()
	var xadds atomic.Int64
	var lives atomic.Int64
	outbox := durable.NewOutbox(pg.SessionPool{Pool: e.pool}, dao.New())
	notifications := service.NewNotificationService(repository.NewNotificationRepository(e.pool, dao.New()))
	writer := events.NewStreamWriter(rds.Client)

	root, stopAll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var relayStats [relays][]*job.Relay
	for i := range relays {
		supervise(root, &wg, &lives, func(ctx context.Context, l *workerLife, n int) {
			owner := fmt.Sprintf("relay-%d-life-%d", i, n)
			l.onKill = func() { expireOutboxLeases(t, e, owner) } // its leases run out at once
			r := job.NewRelay(
				&killingOutbox{next: outbox, life: l, kills: kills},
				&killingAdder{next: writer, life: l, kills: kills, onAdd: func(string) { xadds.Add(1) }},
				job.RelayConfig{Stream: stream, Batch: 10, Lease: relayLease, Poll: 5 * time.Millisecond},
				owner, clock.Now, log)
			relayStats[i] = append(relayStats[i], r)
			_ = r.Run(ctx)
		})
	}
	for i := range consumers {
		supervise(root, &wg, &lives, func(ctx context.Context, l *workerLife, n int) {
			apply := job.NotificationsHandler(&killingApplier{next: notifications, life: l, kills: kills}, log)
			c := events.NewConsumer(rds.Client, events.ConsumerConfig{
				Stream: stream, Group: job.GroupNotifications, Name: fmt.Sprintf("consumer-%d-life-%d", i, n),
				BatchSize: 20, BatchWait: 10 * time.Millisecond, ClaimIdle: consumerClaim, ClaimEvery: consumerClaim,
				Backoff: 10 * time.Millisecond,
			}, func(ctx context.Context, msgs []events.Message) error {
				if batchKills.strike("consumer: before apply") {
					l.kill()
					return ctx.Err()
				}
				if err := apply(ctx, msgs); err != nil {
					return err
				}
				if batchKills.strike("consumer: after apply, before XACK") {
					l.kill()
				}
				return nil
			}, log)
			_ = c.Run(ctx)
		})
	}

	// Publish from four goroutines while all of that runs, then withdraw a few.
	repo := repository.NewArticleRepository(e.pool, dao.New(),
		cache.NewArticleCache(rds.Client, cache.Keyspace(rds.Prefix), outboxCachePolicy, nil, log),
		cache.NewAuthorPageCache(rds.Client, cache.Keyspace(rds.Prefix), outboxCachePolicy),
		cache.NewListPageCache(rds.Client, cache.Keyspace(rds.Prefix), outboxCachePolicy, log),
		cache.NewTagsCache(rds.Client, cache.Keyspace(rds.Prefix), outboxCachePolicy, log), search.Language("english"), log, nil)
	began := time.Now()
	transition := func(ids []int64, from domain.ArticleStatus, to domain.ArticleStatus) {
		var pub sync.WaitGroup
		for w := range 4 {
			pub.Go(func() {
				for k := w; k < len(ids); k += 4 {
					if _, err := repo.Transition(ctx, ids[k], []domain.ArticleStatus{from}, to); err != nil {
						t.Errorf("move article %d to %s: %v", ids[k], to, err)
						return
					}
				}
			})
		}
		pub.Wait()
	}
	transition(articleIDs, domain.StatusDraft, domain.StatusPublished)
	transition(articleIDs[:withdrawn], domain.StatusPublished, domain.StatusWithdrawn)
	if t.Failed() {
		stopAll()
		wg.Wait()
		t.FailNow()
	}

	const wantNotifications = articles * perAuthor
	testenv.WaitUntil(t, "every event is published and every notification exists", func() bool {
		return e.count(t, `SELECT count(*) FROM outbox WHERE status <> 'applied'`) == 0 &&
			e.count(t, `SELECT count(*) FROM notifications`) >= wantNotifications
	}, 2*time.Minute)
	elapsed := time.Since(began)
	stopAll()
	wg.Wait()

	var lostLeases, published int64
	for _, rs := range relayStats {
		for _, r := range rs {
			lostLeases += r.Stats.LostLeases.Load()
			published += r.Stats.Published.Load()
		}
	}
	t.Logf("%d events relayed in %v; %d XADDs, %d marked by their claimer, %d marks lost to a re-claim; %d lives; kills %v",
		articles+withdrawn, elapsed.Round(time.Millisecond), xadds.Load(), published, lostLeases, lives.Load(), kills.kills)
	t.Logf("consumer batch kills %v", batchKills.kills)

	t.Run("every_event_reached_the_stream", func(t *testing.T) {
		inStream := map[string]int{}
		entries, err := rds.Client.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range entries {
			id, _ := m.Values["id"].(string)
			inStream[id]++
		}
		ids, err := e.pool.Query(ctx, `SELECT id, topic FROM outbox`)
		if err != nil {
			t.Fatal(err)
		}
		defer ids.Close()
		var missing []string
		topics := map[string]int{}
		n, dups := 0, 0
		for ids.Next() {
			var ev domain.OutboxEvent
			if err := ids.Scan(&ev.ID, &ev.Topic); err != nil {
				t.Fatal(err)
			}
			n++
			topics[ev.Topic]++
			switch c := inStream[ev.EventID()]; {
			case c == 0:
				missing = append(missing, ev.EventID())
			case c > 1:
				dups++
			}
		}
		if n != articles+withdrawn || topics[domain.TopicArticlePublished] != articles || topics[domain.TopicArticleWithdrawn] != withdrawn {
			t.Fatalf("outbox has %d events %v, want %d published and %d withdrawn", n, topics, articles, withdrawn)
		}
		if len(missing) > 0 {
			t.Fatalf("%d events never reached the stream, e.g. %v", len(missing), missing[:min(5, len(missing))])
		}
		t.Logf("%d stream entries for %d events (%d delivered more than once)", len(entries), n, dups)
	})
	t.Run("every_follower_notified_once_per_publication", func(t *testing.T) {
		if n := e.count(t, `SELECT count(*) FROM notifications`); n != wantNotifications {
			t.Fatalf("%d notifications, want %d", n, wantNotifications)
		}
		if n := e.count(t, `SELECT count(*) FROM (SELECT 1 FROM notifications GROUP BY user_id, article_id HAVING count(*) <> 1) d`); n != 0 {
			t.Fatalf("%d (follower, article) pairs notified more than once", n)
		}
		if n := e.count(t, `
			SELECT count(*) FROM articles a JOIN follows f ON f.followee_id = a.author_id
			WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.user_id = f.follower_id AND n.article_id = a.id)`); n != 0 {
			t.Fatalf("%d (follower, article) pairs never notified", n)
		}
		if n := e.count(t, `
			SELECT count(*) FROM notifications n JOIN articles a ON a.id = n.article_id
			WHERE n.kind <> $1 OR n.actor_id <> a.author_id
			   OR NOT EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = n.user_id AND f.followee_id = a.author_id)`,
			domain.TopicArticlePublished); n != 0 {
			t.Fatalf("%d notifications for the wrong kind, actor or person", n)
		}
		if n := e.count(t, `SELECT count(*) FROM inbox WHERE consumer = $1`, job.GroupNotifications); n != articles {
			t.Fatalf("%d publications recorded as applied, want %d", n, articles)
		}
	})
	t.Run("chaos_happened", func(t *testing.T) {
		if kills.total()+batchKills.total() == 0 || lives.Load() <= relays+consumers {
			t.Fatalf("nothing was killed (kills %v %v, lives %d): the test proved nothing", kills.kills, batchKills.kills, lives.Load())
		}
	})
}

var outboxCachePolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: time.Minute, LoadTimeout: 30 * time.Second}

// TestRelay_RelayOnce covers one relay pass against the real outbox and stream.
func TestRelay_RelayOnce(t *testing.T) {
	t.Parallel()
	e := newQueueEnv(t, 8)
	rds := testenv.NewRedis(t)
	ctx := context.Background()
	outbox := durable.NewOutbox(pg.SessionPool{Pool: e.pool}, dao.New())
	stream := rds.Prefix + "stream:relay-once"
	insert := func(n int) {
		t.Helper()
		if _, err := e.pool.Exec(ctx, `INSERT INTO outbox (topic, aggregate_id, payload)
			SELECT $2, g, jsonb_build_object('articleId', g) FROM generate_series(1, $1::int) g`, n, domain.TopicArticlePublished); err != nil {
			t.Fatal(err)
		}
	}
	entries := func() []redis.XMessage {
		t.Helper()
		m, err := rds.Client.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	clock := newQueueClock()
	insert(5)
	r := job.NewRelay(outbox, events.NewStreamWriter(rds.Client), job.RelayConfig{Stream: stream, Batch: 3, Lease: time.Minute, Poll: time.Hour},
		"relay", clock.Now, testenv.Logger(t))

	for _, want := range []int{3, 2, 0} {
		n, err := r.RelayOnce(ctx)
		if err != nil || n != want {
			t.Fatalf("relay pass: %d events, err %v; want %d", n, err, want)
		}
	}
	got := entries()
	if len(got) != 5 || r.Stats.Published.Load() != 5 {
		t.Fatalf("%d entries, %d published; want 5 and 5", len(got), r.Stats.Published.Load())
	}
	for i, m := range got {
		if m.Values["topic"] != domain.TopicArticlePublished || !strings.HasPrefix(m.Values["id"].(string), "outbox-") ||
			m.Values["aggregate"] != fmt.Sprint(i+1) || !strings.Contains(m.Values["payload"].(string), fmt.Sprintf(`"articleId": %d`, i+1)) {
			t.Fatalf("entry %d: %v", i, m.Values)
		}
	}

	t.Run("failed_xadd_gives_the_events_back_at_once", func(t *testing.T) {
		insert(2)
		failing := job.NewRelay(outbox, failingAdder{}, job.RelayConfig{Stream: stream, Batch: 10, Lease: time.Minute, Poll: time.Hour},
			"relay-down", clock.Now, testenv.Logger(t))
		if _, err := failing.RelayOnce(ctx); err == nil {
			t.Fatal("a failed XADD was not reported")
		}
		if n := e.count(t, `SELECT count(*) FROM outbox WHERE status = 'pending' AND lease_owner IS NULL AND attempts = 0
			AND last_error = 'stream write failed: redis is down'`); n != 2 {
			t.Fatalf("%d events given back with the error, want 2", n)
		}
		if n, err := r.RelayOnce(ctx); err != nil || n != 2 {
			t.Fatalf("the next pass: %d, %v", n, err)
		}
		if len(entries()) != 7 || e.count(t, `SELECT count(*) FROM outbox WHERE status = 'pending'`) != 0 {
			t.Fatalf("entries %d, backlog %d", len(entries()), e.count(t, `SELECT count(*) FROM outbox WHERE status = 'pending'`))
		}
	})
}

type failingAdder struct{}

func (failingAdder) Add(context.Context, string, map[string]any) error {
	return errors.New("redis is down")
}
