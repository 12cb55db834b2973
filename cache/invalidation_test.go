package cache_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// These tests run two (or more) instances in one test: each is a cache stack of its own — its
// own Redis client, broadcaster and caches — on the key prefix they share, as two processes
// behind a load balancer would be. Nothing waits by sleeping: the broadcaster's hooks say when
// its subscription goroutine has handled a message or changed state.

// localPolicy keeps local copies far longer than a test runs, so only a broadcast can end them.
var localPolicy = cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, LoadTimeout: 30 * time.Second, LocalTTL: 10 * time.Minute}

type receipt struct {
	keys []string
	own  bool
}

// instance is one process's cache stack.
type instance struct {
	clientName string // of every connection its caches' client opens (the subscription's too, unless it has a client of its own)
	bcast      *cache.Broadcaster
	rt         *cache.ReadThrough[article]
	counters   *cache.Counters
	viewers    *cache.ViewerState
	received   chan receipt
	state      chan bool
}

type instanceOpts struct {
	tuning      cache.BroadcastTuning
	bcastClient redis.UniversalClient // nil: the caches' client
	hook        redis.Hook            // added to the caches' client
}

func newInstance(t *testing.T, ks cache.Keyspace, o instanceOpts) *instance {
	t.Helper()
	in := &instance{clientName: "inkwelltest-" + testenv.RandomID(6), received: make(chan receipt, 1024), state: make(chan bool, 64)}
	rdb := testenv.NewRedisClient(t, func(opts *redis.UniversalOptions) { opts.ClientName = in.clientName })
	if o.hook != nil {
		rdb.AddHook(o.hook)
	}
	if o.bcastClient == nil {
		o.bcastClient = rdb
	}
	tu := o.tuning
	tu.Received = func(keys []string, own bool) { in.received <- receipt{keys: keys, own: own} }
	tu.State = func(up bool) { in.state <- up }
	log := testenv.Logger(t)
	bcast, stop := cache.NewTunedBroadcaster(o.bcastClient, ks, log, tu)
	t.Cleanup(stop) // before the clients close
	in.bcast = bcast
	policy := localPolicy
	policy.Broadcast = bcast
	in.rt = cache.NewReadThrough[article](rdb, "article", policy, log)
	in.counters = cache.NewCounters(rdb, ks, policy, log)
	in.viewers = cache.NewViewerState(rdb, ks, policy, log)
	return in
}

// waitState waits until the instance's subscription reports up (or down).
func (in *instance) waitState(t *testing.T, up bool) {
	t.Helper()
	for testenv.Recv(t, in.state, fmt.Sprintf("subscribed=%v", up)) != up {
	}
	if in.bcast.Subscribed() != up {
		t.Fatalf("Subscribed() = %v right after the state changed to %v", !up, up)
	}
}

// waitReceived waits until the instance has handled a message about key (from itself if own).
func (in *instance) waitReceived(t *testing.T, key string, own bool) {
	t.Helper()
	for {
		r := testenv.Recv(t, in.received, "the invalidation of "+key)
		if r.own == own && slices.Contains(r.keys, key) {
			return
		}
	}
}

func (in *instance) get(t *testing.T, key string, l *loader) article {
	t.Helper()
	v, err := in.rt.Get(context.Background(), key, l.load)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return v
}

func (in *instance) localHits() int64 { return in.rt.Stats.LocalHits.Load() }

func twoInstances(t *testing.T, a, b instanceOpts) (cache.Keyspace, *instance, *instance) {
	t.Helper()
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	ia, ib := newInstance(t, ks, a), newInstance(t, ks, b)
	ia.waitState(t, true)
	ib.waitState(t, true)
	return ks, ia, ib
}

func TestBroadcast_ChangeOnOneInstanceDropsTheOthersCopy(t *testing.T) {
	t.Parallel()
	ks, a, b := twoInstances(t, instanceOpts{}, instanceOpts{})
	ctx := context.Background()
	key := ks.Key("article", "1")
	l := &loader{val: article{ID: 1, Title: "v1"}}

	b.get(t, key, l)
	if v := b.get(t, key, l); v.Title != "v1" || b.localHits() != 1 {
		t.Fatalf("B's second read: %+v with %d local hits; want v1 from its tier", v, b.localHits())
	}

	// An update through A, warmed up at once (the publish warm-up): B's copy goes, its next read
	// is Redis's.
	if err := a.rt.Refresh(ctx, key, loadValue(article{ID: 1, Title: "v2"})); err != nil {
		t.Fatal(err)
	}
	b.waitReceived(t, key, false)
	if v := b.get(t, key, l); v.Title != "v2" || b.localHits() != 1 || l.calls.Load() != 1 {
		t.Fatalf("B after A's Refresh: %+v, %d local hits, %d loads; want v2 from Redis", v, b.localHits(), l.calls.Load())
	}
	if v := b.get(t, key, l); v.Title != "v2" || b.localHits() != 2 {
		t.Fatalf("B's read after that: %+v, %d local hits; want v2 from its tier again", v, b.localHits())
	}

	// A skipped its own message: the value its warm-up kept in process is still there.
	a.waitReceived(t, key, true)
	if v := a.get(t, key, l); v.Title != "v2" || a.localHits() != 1 {
		t.Fatalf("A's read of its own write: %+v with %d local hits; want its own copy", v, a.localHits())
	}
	if n := a.bcast.Stats.Received.Load(); n != 0 {
		t.Errorf("A applied %d messages; its own are skipped", n)
	}

	// A delete through A: B loads.
	l.val = article{ID: 1, Title: "v3"}
	if err := a.rt.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	b.waitReceived(t, key, false)
	if v := b.get(t, key, l); v.Title != "v3" || l.calls.Load() != 2 {
		t.Fatalf("B after A's Delete: %+v after %d loads; want v3 loaded", v, l.calls.Load())
	}
	if p, r := a.bcast.Stats.Published.Load(), b.bcast.Stats.Received.Load(); p != 2 || r != 2 {
		t.Errorf("A published %d messages, B applied %d; want 2 and 2 (one per change)", p, r)
	}
}

func TestBroadcast_CountersFollowAnotherInstancesChange(t *testing.T) {
	t.Parallel()
	_, a, b := twoInstances(t, instanceOpts{}, instanceOpts{})
	ctx := context.Background()
	if err := a.counters.Fill(ctx, domain.BizArticle, map[int64]domain.Counters{7: {Likes: 1}, 8: {Likes: 5}}); err != nil {
		t.Fatal(err)
	}
	b.waitReceived(t, a.counters.Key(domain.BizArticle, 8), false) // or it could drop what B reads next
	noLoad := func(context.Context, []int64) (map[int64][]cache.CounterRow, error) {
		t.Error("a cached item was loaded")
		return nil, nil
	}
	likes := func() (int64, int64) {
		got, err := b.counters.Read(ctx, domain.BizArticle, []int64{7, 8}, noLoad)
		if err != nil {
			t.Fatal(err)
		}
		return got[7].Likes, got[8].Likes
	}
	likes()
	likes()
	if h := b.counters.Stats.LocalHits.Load(); h != 2 {
		t.Fatalf("B's counters: %d local hits after two reads of two items, want 2", h)
	}

	// One like of each through A, in one unit of work: one message for both items.
	tx := &fakeTx{}
	a.counters.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{
		7: {Counters: domain.Counters{Likes: 2}, Version: 1}, 8: {Counters: domain.Counters{Likes: 6}, Version: 1},
	})
	published := a.bcast.Stats.Published.Load()
	tx.end(txCommitted)
	if n := a.bcast.Stats.Published.Load() - published; n != 1 {
		t.Errorf("the commit published %d messages, want 1", n)
	}
	b.waitReceived(t, a.counters.Key(domain.BizArticle, 8), false)
	if l7, l8 := likes(); l7 != 2 || l8 != 6 {
		t.Fatalf("B reads likes %d and %d after A's likes, want 2 and 6", l7, l8)
	}
}

// holdResubscription lets an instance's first subscription through and holds every later one
// until release is closed; held receives when one is waiting.
type holdResubscription struct {
	attempts atomic.Int64
	held     chan struct{}
	release  chan struct{}
	once     sync.Once
}

func newHold(t *testing.T) *holdResubscription {
	h := &holdResubscription{held: make(chan struct{}, 1), release: make(chan struct{})}
	t.Cleanup(h.open)
	return h
}

func (h *holdResubscription) open() { h.once.Do(func() { close(h.release) }) }

func (h *holdResubscription) before(ctx context.Context) error {
	if h.attempts.Add(1) == 1 {
		return nil
	}
	select {
	case h.held <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// killPubSub closes, server side, the subscription connections of clients named name (on every
// master of a cluster) and fails the test if there was none.
func killPubSub(t *testing.T, admin redis.UniversalClient, name string) {
	t.Helper()
	ctx := context.Background()
	var killed atomic.Int64
	kill := func(ctx context.Context, c redis.UniversalClient) error {
		list, err := c.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").Text()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(list, "\n") {
			f := map[string]string{}
			for _, kv := range strings.Fields(line) {
				k, v, _ := strings.Cut(kv, "=")
				f[k] = v
			}
			if f["name"] != name {
				continue
			}
			if err := c.Do(ctx, "CLIENT", "KILL", "ID", f["id"]).Err(); err != nil {
				return err
			}
			killed.Add(1)
		}
		return nil
	}
	var err error
	if cc, ok := admin.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return kill(ctx, node) })
	} else {
		err = kill(ctx, admin)
	}
	if err != nil {
		t.Fatalf("kill the subscription of %s: %v", name, err)
	}
	if killed.Load() == 0 {
		t.Fatalf("no subscription connection named %s", name)
	}
}

// TestBroadcast_LostSubscriptionTurnsTheTiersOff: while B's subscription is down, B reads Redis
// (its tier neither answers nor fills) and says so; once it has resubscribed, what its tier held
// from before is gone — a change made meanwhile never reached it — and the tier is used again.
func TestBroadcast_LostSubscriptionTurnsTheTiersOff(t *testing.T) {
	t.Parallel()
	hold := newHold(t)
	ks, a, b := twoInstances(t, instanceOpts{}, instanceOpts{tuning: cache.BroadcastTuning{BeforeSubscribe: hold.before}})
	ctx := context.Background()
	key := ks.Key("article", "1")
	l := &loader{val: article{ID: 1, Title: "v1"}}
	b.get(t, key, l)
	b.get(t, key, l)
	if b.localHits() != 1 {
		t.Fatalf("%d local hits, want 1", b.localHits())
	}

	killPubSub(t, testenv.NewRedisClient(t, nil), b.clientName)
	b.waitState(t, false)
	testenv.Recv(t, hold.held, "B's resubscription")

	// A's change now reaches nobody on B's side.
	if err := a.rt.Refresh(ctx, key, loadValue(article{ID: 1, Title: "v2"})); err != nil {
		t.Fatal(err)
	}
	hits := b.rt.Stats.Hits.Load()
	for range 3 {
		if v := b.get(t, key, l); v.Title != "v2" {
			t.Fatalf("B served %+v with its subscription down; want v2 from Redis", v)
		}
	}
	if b.localHits() != 1 || b.rt.Stats.Hits.Load() != hits+3 {
		t.Fatalf("with the subscription down: %d local hits (want still 1), %d Redis hits (want %d)",
			b.localHits(), b.rt.Stats.Hits.Load(), hits+3)
	}

	hold.open()
	b.waitState(t, true)
	if v := b.get(t, key, l); v.Title != "v2" || b.localHits() != 1 {
		t.Fatalf("B's first read after resubscribing: %+v, %d local hits; want v2 from Redis (the tier flushed)", v, b.localHits())
	}
	if v := b.get(t, key, l); v.Title != "v2" || b.localHits() != 2 {
		t.Fatalf("B's next read: %+v, %d local hits; want its tier in use again", v, b.localHits())
	}
	st := &b.bcast.Stats
	if st.Losses.Load() != 1 || st.Subscriptions.Load() != 2 {
		t.Errorf("losses %d, subscriptions %d; want 1 and 2", st.Losses.Load(), st.Subscriptions.Load())
	}
}

// TestBroadcast_UnansweredPingTurnsTheTiersOff: a subscription whose connection stays open but
// carries nothing back (a network that drops packets) is found by its ping and counts as lost.
func TestBroadcast_UnansweredPingTurnsTheTiersOff(t *testing.T) {
	t.Parallel()
	if testenv.RedisMode() == "cluster" {
		t.Skip("a proxy in front of one node does not work for a cluster client, which connects to the nodes the cluster names")
	}
	faults := testenv.NewFaults(t)
	proxy := faults.RedisProxy()
	viaProxy := testenv.NewRedisClient(t, func(o *redis.UniversalOptions) {
		o.Addrs = []string{proxy.Addr}
		o.ReadTimeout, o.MaxRetries = 300*time.Millisecond, -1 // as ioc.RedisOptions sets them
	})
	ks, _, b := twoInstances(t, instanceOpts{}, instanceOpts{
		bcastClient: viaProxy,
		tuning:      cache.BroadcastTuning{PingEvery: 20 * time.Millisecond, PingTimeout: 200 * time.Millisecond},
	})
	key := ks.Key("article", "1")
	l := &loader{val: article{ID: 1, Title: "v1"}}
	b.get(t, key, l)
	b.get(t, key, l)

	proxy.Toxic("silence", "timeout", "downstream", map[string]any{"timeout": 0}) // nothing comes back
	b.waitState(t, false)
	b.get(t, key, l)
	if b.localHits() != 1 {
		t.Fatalf("%d local hits with the subscription silent, want still 1", b.localHits())
	}
	proxy.RemoveToxic("silence")
	b.waitState(t, true)
	b.get(t, key, l)
	b.get(t, key, l)
	if b.localHits() != 2 {
		t.Fatalf("%d local hits after resubscribing, want 2 (one read refills the flushed tier)", b.localHits())
	}
}

func loadValue(v article) func(context.Context) (article, error) {
	return func(context.Context) (article, error) { return v, nil }
}

// failPublish is a go-redis hook failing every PUBLISH.
type failPublish struct{}

var errPublish = errors.New("injected: publish failed")

func (failPublish) DialHook(next redis.DialHook) redis.DialHook { return next }

func (failPublish) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "publish" {
			cmd.SetErr(errPublish)
			return errPublish
		}
		return next(ctx, cmd)
	}
}

func (failPublish) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestBroadcast_PublishFailureDoesNotFailTheWrite(t *testing.T) {
	t.Parallel()
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	a := newInstance(t, ks, instanceOpts{hook: failPublish{}})
	a.waitState(t, true)
	ctx := context.Background()
	key := ks.Key("article", "1")
	if err := a.rt.Refresh(ctx, key, loadValue(article{ID: 1, Title: "v1"})); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if err := a.rt.Delete(ctx, key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if f, p := a.bcast.Stats.PublishFailed.Load(), a.bcast.Stats.Published.Load(); f != 2 || p != 0 {
		t.Fatalf("publish failures %d, published %d; want 2 and 0", f, p)
	}
}

// TestBroadcast_NeverSubscribedNeverUsesTheTiers: an instance that cannot subscribe (Redis down
// at start for its subscription) reads through Redis every time.
func TestBroadcast_NeverSubscribedNeverUsesTheTiers(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	bcast, stop := cache.NewTunedBroadcaster(testenv.DeadRedis(t), cache.Keyspace(r.Prefix), testenv.Logger(t), cache.BroadcastTuning{})
	t.Cleanup(stop)
	policy := localPolicy
	policy.Broadcast = bcast
	rt := cache.NewReadThrough[article](r.Client, "article", policy, testenv.Logger(t))
	l := &loader{val: article{ID: 1}}
	for range 3 {
		if _, err := rt.Get(context.Background(), r.Prefix+"k", l.load); err != nil {
			t.Fatal(err)
		}
	}
	if bcast.Subscribed() || rt.Stats.LocalHits.Load() != 0 || rt.Stats.Hits.Load() != 2 {
		t.Fatalf("subscribed %v, %d local hits, %d Redis hits; want false, 0, 2", bcast.Subscribed(), rt.Stats.LocalHits.Load(), rt.Stats.Hits.Load())
	}
}

// TestBroadcast_UnreadableMessageFlushesTheTiers: what a message that cannot be decoded said
// changed is unknown, so nothing kept in process is trusted.
func TestBroadcast_UnreadableMessageFlushesTheTiers(t *testing.T) {
	t.Parallel()
	ks, _, b := twoInstances(t, instanceOpts{}, instanceOpts{})
	key := ks.Key("article", "1")
	l := &loader{val: article{ID: 1, Title: "v1"}}
	b.get(t, key, l)
	b.get(t, key, l)
	if err := testenv.NewRedisClient(t, nil).Publish(context.Background(), b.bcast.Channel(), "not json").Err(); err != nil {
		t.Fatal(err)
	}
	for testenv.Recv(t, b.received, "the unreadable message").keys != nil {
	}
	b.get(t, key, l)
	if b.localHits() != 1 || b.bcast.Stats.UnreadableMsgs.Load() != 1 {
		t.Fatalf("%d local hits, %d unreadable; want 1 and 1 (the read after the message from Redis)", b.localHits(), b.bcast.Stats.UnreadableMsgs.Load())
	}
}

// BenchmarkReadThroughLocalHit: a hit in the in-process tier costs the same with a subscribed
// broadcaster in front (one atomic load) as without one.
func BenchmarkReadThroughLocalHit(b *testing.B) {
	r := testenv.NewRedis(b)
	ks := cache.Keyspace(r.Prefix)
	run := func(b *testing.B, policy cache.Policy) {
		rt := cache.NewReadThrough[article](r.Client, "article", policy, nil)
		l := &loader{val: article{ID: 1, Title: "hot"}}
		ctx := context.Background()
		key := ks.Key("article", "1")
		if _, err := rt.Get(ctx, key, l.load); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := rt.Get(ctx, key, l.load); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if rt.Stats.LocalHits.Load() < int64(b.N) {
			b.Fatalf("%d local hits in %d reads", rt.Stats.LocalHits.Load(), b.N)
		}
	}
	b.Run("alone", func(b *testing.B) { run(b, localPolicy) })
	b.Run("subscribed", func(b *testing.B) {
		state := make(chan bool, 16)
		bcast, stop := cache.NewTunedBroadcaster(r.Client, ks, nil, cache.BroadcastTuning{State: func(up bool) { state <- up }})
		defer stop()
		for !<-state {
		}
		p := localPolicy
		p.Broadcast = bcast
		run(b, p)
	})
}
