package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestNotificationHub_FanOut: a user notified through one instance's hub wakes that user's
// streams on every instance, and nobody else's.
func TestNotificationHub_FanOut(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	a, stopA := cache.NewNotificationHub(r.Client, ks, nil, nil, testenv.Logger(t))
	t.Cleanup(stopA)
	c, stopC := cache.NewNotificationHub(r.Client, ks, nil, nil, testenv.Logger(t))
	t.Cleanup(stopC)
	reader, take, unwatch := c.Watch(7)
	defer unwatch()
	other, _, unwatchOther := c.Watch(8)
	defer unwatchOther()
	testenv.WaitUntil(t, "both hubs subscribed", func() bool { return a.Subscribed() && c.Subscribed() })
	drain := func(ch <-chan struct{}) {
		select {
		case <-ch: // the wake-up of the subscription's confirmation
		default:
		}
	}
	drain(reader)
	drain(other)
	take() // the subscription's confirmation: read PostgreSQL

	a.Notified(context.Background(), []int64{7, 9})
	select {
	case <-reader:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader's stream on C was not woken")
	}
	if items, poll := take(); len(items) != 0 || !poll {
		t.Fatalf("a users-only announcement handed %v, poll %v; want a read of PostgreSQL", items, poll)
	}
	select {
	case <-other:
		t.Fatal("another user's stream was woken")
	default:
	}
	if a.Stats.Published.Load() != 1 {
		t.Fatalf("published %d", a.Stats.Published.Load())
	}

	// An announcement that carries the notifications hands each stream its own, rendered.
	at := time.Date(2026, 12, 4, 10, 0, 0, 123456000, time.UTC)
	a.NotifiedWith(context.Background(), []domain.UserNotification{
		{UserID: 7, Notification: domain.Notification{ID: 41, Kind: "article.published", ActorUsername: "ann", ArticleSlug: "s", ArticleTitle: "T", CreatedAt: at}},
		{UserID: 9, Notification: domain.Notification{ID: 42, Kind: "article.published", CreatedAt: at}},
		{UserID: 7, Notification: domain.Notification{ID: 43, Kind: "report.resolved", Detail: "d", CreatedAt: at}},
	})
	select {
	case <-reader:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader's stream on C was not woken by the carried notifications")
	}
	items, poll := take()
	if poll || len(items) != 2 || items[0].ID != 41 || items[0].ActorUsername != "ann" || items[0].ArticleSlug != "s" ||
		items[0].ArticleTitle != "T" || !items[0].CreatedAt.Equal(at) || items[1].ID != 43 || items[1].Detail != "d" {
		t.Fatalf("carried %+v, poll %v", items, poll)
	}
	select {
	case <-other:
		t.Fatal("another user's stream was woken")
	default:
	}
}

// TestNotificationHub_Slots: the per-user count is shared by every instance, freed by Release and
// by expiry (a crashed instance's streams).
func TestNotificationHub_Slots(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	h, stop := cache.NewNotificationHub(r.Client, cache.Keyspace(r.Prefix), nil, nil, testenv.Logger(t))
	t.Cleanup(stop)
	ctx := context.Background()
	for _, id := range []string{"s1", "s2"} {
		if ok, err := h.Acquire(ctx, 7, id, 2, time.Minute); !ok || err != nil {
			t.Fatalf("acquire %s: %v %v", id, ok, err)
		}
	}
	if ok, _ := h.Acquire(ctx, 7, "s3", 2, time.Minute); ok {
		t.Fatal("a third slot over a cap of 2")
	}
	if ok, _ := h.Acquire(ctx, 8, "s4", 2, time.Minute); !ok {
		t.Fatal("another user's slot refused")
	}
	if err := h.Release(ctx, 7, "s1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := h.Acquire(ctx, 7, "s3", 2, time.Minute); !ok {
		t.Fatal("no slot after a release")
	}
	// s2's slot lapses (its instance stopped refreshing it); s3 refreshed stays.
	if err := h.Refresh(ctx, 7, "s3", time.Minute); err != nil {
		t.Fatal(err)
	}
	r.Client.ZAdd(ctx, cache.Keyspace(r.Prefix).Key("streams", "7"), redisZ(time.Now().Add(-time.Second).UnixMilli(), "s2"))
	if ok, _ := h.Acquire(ctx, 7, "s5", 2, time.Minute); !ok {
		t.Fatal("an expired slot still counted")
	}
}

// TestNotificationHub_Tickets: a ticket is taken once.
func TestNotificationHub_Tickets(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	h, stop := cache.NewNotificationHub(r.Client, cache.Keyspace(r.Prefix), nil, nil, testenv.Logger(t))
	t.Cleanup(stop)
	ctx := context.Background()
	if err := h.PutTicket(ctx, "hash", []byte("v"), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if ttl := r.Client.PTTL(ctx, cache.Keyspace(r.Prefix).Key("streamticket", "hash")).Val(); ttl <= 0 || ttl > 30*time.Second {
		t.Fatalf("ticket ttl %v", ttl)
	}
	if v, ok, err := h.TakeTicket(ctx, "hash"); string(v) != "v" || !ok || err != nil {
		t.Fatalf("take = %q %v %v", v, ok, err)
	}
	if _, ok, err := h.TakeTicket(ctx, "hash"); ok || err != nil {
		t.Fatalf("taken twice: %v %v", ok, err)
	}
}

func redisZ(score int64, member string) redis.Z {
	return redis.Z{Score: float64(score), Member: member}
}

// TestNotificationHub_RevocationRechecks: a revocation this process marks wakes the streams of
// that session only (other instances' marks arrive as a tier of the broadcaster).
func TestNotificationHub_RevocationRechecks(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	ks := cache.Keyspace(r.Prefix)
	rev := cache.NewRevocations(r.Client, ks, nil)
	h, stop := cache.NewNotificationHub(r.Client, ks, nil, rev, testenv.Logger(t))
	t.Cleanup(stop)
	revoked, unwatch := h.WatchSession("sid-1")
	defer unwatch()
	kept, unwatchKept := h.WatchSession("sid-2")
	defer unwatchKept()
	if none, _ := h.WatchSession(""); none != nil {
		t.Fatal("an API key's stream got a recheck channel")
	}
	if err := rev.Revoke(context.Background(), "sid-1", time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-revoked:
	default:
		t.Fatal("the revoked session's stream was not woken")
	}
	select {
	case <-kept:
		t.Fatal("another session's stream was woken")
	default:
	}
}
