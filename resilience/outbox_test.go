package resilience

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestResilience_RedisRestartsEmptyDuringOutboxDelivery: "Redis restarts empty during outbox
// delivery: 0 notifications lost, 0 duplicated". The wired app (relay, consumer, re-drive all
// running as in production, with a short redelivery window) talks to a private redis-server that
// keeps nothing on disk. An author publishes articles one after another while her followers
// wait for notifications. The test holds a lock on the inbox table: the consumer takes the first
// article's event and waits on the lock in its transaction, so the next eleven events the relay
// moves to the stream stay there unread. Redis is then killed and started again empty: the
// stream loses them, with the consumer group. More articles are published while Redis is down and after it came back. Every
// (follower, article) pair must end with exactly one notification and every outbox event applied.
func TestResilience_RedisRestartsEmptyDuringOutboxDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a redis-server under a running app")
	}
	if os.Getenv("TEST_REDIS_MODE") == "cluster" || strings.Contains(testenv.RedisURL(), "addr=") {
		t.Skip("restarts one private Redis server, not a cluster")
	}
	const (
		followers = 5
		before    = 12 // articles published before Redis dies
		during    = 4  // while it is down
		after     = 8  // after it came back empty
	)
	srv := testenv.StartRedisServer(t)
	app := apptest.Start(t, func(c *ioc.Config) {
		c.Redis.URL, c.Redis.Mode = srv.URL(), ""
		c.Server.RateWrites = "100000/1m"
		c.Tune.ConsumerClaimIdle = new(200 * time.Millisecond)
		c.Tune.ConsumerClaimEvery = new(200 * time.Millisecond)
		c.Tune.OutboxRedeliverAfter = new(time.Second) // re-drive passes every 250 ms
		c.Tune.OutboxBackoffMax = new(100 * time.Millisecond)
		c.Tune.OutboxPoll = new(50 * time.Millisecond)
	})
	author := app.Register("outbox_author")
	for i := range followers {
		fan := app.Register(fmt.Sprintf("outbox_fan%d", i))
		app.Do("POST", "/api/profiles/outbox_author/follow", fan, nil).Expect(t, 200)
	}
	publish := func(n int, tag string) {
		for i := range n {
			// While Redis is down a write may be refused (503) by a part that fails closed; the
			// author retries, as a client would. What is acknowledged must be announced once.
			for try := 0; ; try++ {
				r, err := app.Fetch(app.HTTP, "POST", "/api/articles", author, apptest.NewArticle(fmt.Sprintf("Outbox %s %d", tag, i)))
				if err == nil && r.Status == 201 {
					break
				}
				if try == 20 {
					t.Fatalf("publish %s %d: %v %v", tag, i, err, r.Status)
				}
			}
		}
	}
	ctx := context.Background()
	count := func(sql string) int64 {
		t.Helper()
		var n int64
		if err := app.DB.Pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("not within 60s: %s (%d outbox events not applied)", what, count(`SELECT count(*) FROM outbox WHERE status <> 'applied'`))
			}
			time.Sleep(50 * time.Millisecond) // polling the outcome of background work, with a deadline
		}
	}

	hold, err := app.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `LOCK TABLE inbox IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	publish(1, "first")
	waitFor("the consumer waits on the inbox lock", func() bool {
		return count(`SELECT count(*) FROM pg_locks WHERE relation = 'inbox'::regclass AND NOT granted`) > 0
	})
	publish(before-1, "before")
	waitFor("the relay moved every event to the stream", func() bool { return count(`SELECT count(*) FROM outbox WHERE status = 'pending'`) == 0 })
	if n := count(`SELECT count(*) FROM outbox WHERE status = 'applied'`); n != 0 {
		t.Fatalf("%d events applied while the inbox was locked", n)
	}
	srv.Stop()
	publish(during, "during")
	srv.Start() // empty
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	publish(after, "after")

	const lostPairs = `SELECT count(*) FROM articles a JOIN follows f ON f.followee_id = a.author_id
		WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.user_id = f.follower_id AND n.article_id = a.id)`
	waitFor("every event applied and every follower notified", func() bool {
		return count(`SELECT count(*) FROM outbox WHERE status <> 'applied'`) == 0 && count(lostPairs) == 0
	})
	articles := count(`SELECT count(*) FROM articles`)
	lost := count(lostPairs)
	dup := count(`SELECT count(*) FROM (SELECT 1 FROM notifications GROUP BY user_id, article_id HAVING count(*) > 1) d`)
	redriven := count(`SELECT count(*) FROM outbox WHERE attempts > 0`)
	t.Logf("%d articles, %d followers: %d notifications lost, %d duplicated; %d events re-driven, %d dead",
		articles, followers, lost, dup, redriven, count(`SELECT count(*) FROM outbox WHERE status = 'dead'`))
	if lost != 0 || dup != 0 {
		t.Fatalf("%d (follower, article) pairs never notified, %d notified more than once", lost, dup)
	}
	if articles < before+during+after || count(`SELECT count(*) FROM notifications`) != articles*followers {
		t.Fatalf("%d articles, %d notifications", articles, count(`SELECT count(*) FROM notifications`))
	}
	if redriven < before-1 {
		t.Fatalf("only %d events re-driven: the restart lost less than the %d it was meant to", redriven, before)
	}
}
