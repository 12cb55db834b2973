package events_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// These tests run against the real Redis (TEST_REDIS_URL): each test has its own key prefix and
// so its own stream. The outage tests start a private redis-server they can stop and start again.

type env struct {
	rdb    redis.UniversalClient // the live Redis, to look at (and feed) the stream
	stream string
	log    *slog.Logger
}

func setup(t *testing.T) *env {
	t.Helper()
	r := testenv.NewRedis(t)
	return &env{rdb: r.Client, stream: r.Prefix + "stream:reads", log: testenv.Logger(t)}
}

// privateRedis starts a private redis-server and returns it with a client whose timeouts are
// short, so an outage shows quickly, and that does not retry, so every failure is counted.
func privateRedis(t *testing.T) (*testenv.RedisServer, *redis.Client) {
	t.Helper()
	srv := testenv.StartRedisServer(t)
	rdb := redis.NewClient(&redis.Options{
		Addr: srv.Addr, DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond, MaxRetries: -1, DialerRetries: 1,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	return srv, rdb
}

// eventOpts shapes the events newEvents makes; zero values get defaults.
type eventOpts struct {
	Articles int64     // events go round-robin to articles 1..Articles (default 10)
	UserID   int64     // every event's reader (default 0: anonymous)
	At       time.Time // default: now
}

func newEvents(n int, o eventOpts) []domain.ReadEvent {
	if o.Articles == 0 {
		o.Articles = 10
	}
	if o.At.IsZero() {
		o.At = time.Now()
	}
	evs := make([]domain.ReadEvent, n)
	for i := range evs {
		evs[i] = domain.ReadEvent{
			ID: domain.NewEventID(), ArticleID: int64(i)%o.Articles + 1, UserID: o.UserID,
			At: o.At.Add(time.Duration(i) * time.Microsecond).Truncate(time.Microsecond).UTC(),
		}
	}
	return evs
}

// values is an event as the publisher writes it to the stream.
func values(ev domain.ReadEvent) map[string]any {
	return map[string]any{
		"id": ev.ID, "article": strconv.FormatInt(ev.ArticleID, 10),
		"user": strconv.FormatInt(ev.UserID, 10), "at": strconv.FormatInt(ev.At.UnixMicro(), 10),
	}
}

// add writes n valid read events straight to the stream (pipelined) and returns their entry ids.
func (e *env) add(t *testing.T, n int) []string {
	t.Helper()
	return addValues(t, e.rdb, e.stream, n, func(int) map[string]any { return nil })
}

// addValues writes n entries whose fields are vals(i), or a valid event where vals returns nil.
func addValues(t *testing.T, rdb redis.UniversalClient, stream string, n int, vals func(i int) map[string]any) []string {
	t.Helper()
	evs := newEvents(n, eventOpts{})
	ids := make([]string, 0, n)
	for start := 0; start < n; start += 1000 {
		end := min(start+1000, n)
		cmds := make([]*redis.StringCmd, 0, end-start)
		_, err := rdb.Pipelined(context.Background(), func(p redis.Pipeliner) error {
			for i := start; i < end; i++ {
				v := vals(i)
				if v == nil {
					v = values(evs[i])
				}
				cmds = append(cmds, p.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: v}))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("XADD %d entries: %v", end-start, err)
		}
		for _, c := range cmds {
			ids = append(ids, c.Val())
		}
	}
	return ids
}

func (e *env) xlen(t *testing.T) int64 {
	t.Helper()
	n, err := e.rdb.XLen(context.Background(), e.stream).Result()
	if err != nil {
		t.Fatalf("XLEN: %v", err)
	}
	return n
}

// pending is the group's XPENDING summary (Count 0 when nothing is pending).
func (e *env) pending(t *testing.T, group string) redis.XPending {
	t.Helper()
	p, err := e.rdb.XPending(context.Background(), e.stream, group).Result()
	if err != nil {
		t.Fatalf("XPENDING %s: %v", group, err)
	}
	return *p
}

// createGroup creates a consumer group reading the stream from its beginning.
func (e *env) createGroup(t *testing.T, group string) {
	t.Helper()
	if err := e.rdb.XGroupCreateMkStream(context.Background(), e.stream, group, "0").Err(); err != nil {
		t.Fatalf("XGROUP CREATE %s: %v", group, err)
	}
}

// readAs delivers up to n new entries to consumer of group (as a consumer process would) and
// returns their ids; nothing is acknowledged.
func (e *env) readAs(t *testing.T, group, consumer string, n int) []string {
	t.Helper()
	res, err := e.rdb.XReadGroup(context.Background(), &redis.XReadGroupArgs{
		Group: group, Consumer: consumer, Streams: []string{e.stream, ">"}, Count: int64(n), Block: -1,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		t.Fatalf("XREADGROUP %s/%s: %v", group, consumer, err)
	}
	var ids []string
	for _, s := range res {
		for _, m := range s.Messages {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

func (e *env) ack(t *testing.T, group string, ids []string) {
	t.Helper()
	for start := 0; start < len(ids); start += 1000 {
		if err := e.rdb.XAck(context.Background(), e.stream, group, ids[start:min(start+1000, len(ids))]...).Err(); err != nil {
			t.Fatalf("XACK %s: %v", group, err)
		}
	}
}

// consumerOpts configures a consumer started by startConsumer; zero values get quick defaults.
type consumerOpts struct {
	Client     redis.UniversalClient // default: the env's client
	Group      string                // default "g"
	Name       string                // default "c1"
	BatchSize  int                   // default 100
	BatchWait  time.Duration         // default 20ms
	ClaimIdle  time.Duration         // default 50ms
	ClaimEvery time.Duration         // default 10ms
	Backoff    time.Duration         // default 10ms
}

// running is a consumer running in its own goroutine until stop (or the end of the test).
type running struct {
	*events.Consumer
	stop func() // cancels Run and waits for it to return
}

func (e *env) startConsumer(t *testing.T, h events.Handler, o consumerOpts) *running {
	t.Helper()
	if o.Client == nil {
		o.Client = e.rdb
	}
	if o.Group == "" {
		o.Group = "g"
	}
	if o.Name == "" {
		o.Name = "c1"
	}
	if o.BatchSize == 0 {
		o.BatchSize = 100
	}
	if o.BatchWait == 0 {
		o.BatchWait = 20 * time.Millisecond
	}
	if o.ClaimIdle == 0 {
		o.ClaimIdle = 50 * time.Millisecond
	}
	if o.ClaimEvery == 0 {
		o.ClaimEvery = 10 * time.Millisecond
	}
	if o.Backoff == 0 {
		o.Backoff = 10 * time.Millisecond
	}
	c := events.NewConsumer(o.Client, events.ConsumerConfig{
		Stream: e.stream, Group: o.Group, Name: o.Name, BatchSize: o.BatchSize, BatchWait: o.BatchWait,
		ClaimIdle: o.ClaimIdle, ClaimEvery: o.ClaimEvery, Backoff: o.Backoff,
	}, h, e.log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	var once sync.Once
	r := &running{Consumer: c, stop: func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}}
	t.Cleanup(r.stop) // before the key prefix is deleted
	return r
}

// recorder is a handler that records every batch it is given and may fail or hold some.
type recorder struct {
	mu      sync.Mutex
	batches [][]string // entry ids, per call
	seen    map[string]int
	calls   atomic.Int64
	// before, when set, runs first on every call (with the 1-based call number); an error it
	// returns is the handler's.
	before func(call int64, msgs []events.Message) error
}

func (r *recorder) handle(_ context.Context, msgs []events.Message) error {
	call := r.calls.Add(1)
	if r.before != nil {
		if err := r.before(call, msgs); err != nil {
			return err
		}
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	for _, id := range ids {
		r.seen[id]++
	}
	r.batches = append(r.batches, ids)
	return nil
}

// handled returns the batches handled successfully so far.
func (r *recorder) handled() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// times returns how often entry id was handled successfully.
func (r *recorder) times(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[id]
}

// cmdHook is a go-redis hook that counts pipelines (round trips) and their sizes, and reports the
// outcome of chosen commands.
type cmdHook struct {
	mu        sync.Mutex
	pipelines []int // XADDs per pipelined round trip (connection set-up pipelines are not counted)
	// onCmd, when set, is called after each single command with how long it took and its error.
	onCmd func(ctx context.Context, cmd redis.Cmder, took time.Duration, err error)
	// beforeCmd, when set, is called before each single command is sent.
	beforeCmd func(ctx context.Context, cmd redis.Cmder)
}

func (h *cmdHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *cmdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.beforeCmd != nil {
			h.beforeCmd(ctx, cmd)
		}
		start := time.Now()
		err := next(ctx, cmd)
		if h.onCmd != nil {
			h.onCmd(ctx, cmd, time.Since(start), err)
		}
		return err
	}
}

func (h *cmdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		xadds := 0
		for _, c := range cmds {
			if c.Name() == "xadd" {
				xadds++
			}
		}
		if xadds > 0 {
			h.mu.Lock()
			h.pipelines = append(h.pipelines, xadds)
			h.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

func (h *cmdHook) roundTrips() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.pipelines)
}
