package job_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/service"
)

// fakeReads records what the handlers hand to the service.
type fakeReads struct {
	mu        sync.Mutex
	consumers []string
	counted   [][]domain.ReadEvent
	histories [][]domain.ReadEvent
	err       error
}

func (f *fakeReads) CountReads(_ context.Context, consumer string, evs []domain.ReadEvent) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.consumers = append(f.consumers, consumer)
	f.counted = append(f.counted, evs)
	return int64(len(evs)), f.err
}

func (f *fakeReads) RecordHistory(_ context.Context, evs []domain.ReadEvent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.histories = append(f.histories, evs)
	return f.err
}

// mixedBatch is a batch of stream entries: the good events and, between them, malformed entries.
func mixedBatch(good []domain.ReadEvent) []events.Message {
	malformed := []map[string]any{
		{"junk": "yes"},
		{"id": "", "article": "1", "user": "0", "at": "1"},
		{"id": "x", "article": "abc", "user": "0", "at": "1"},
		{"id": "x", "article": "1", "user": "-1", "at": "1"},
		{"id": "x", "article": "1", "user": "0"},
	}
	var msgs []events.Message
	for i := range max(len(good), len(malformed)) {
		if i < len(malformed) {
			msgs = append(msgs, events.Message{ID: "1-" + strconv.Itoa(2*i), Values: malformed[i]})
		}
		if i < len(good) {
			msgs = append(msgs, events.Message{ID: "1-" + strconv.Itoa(2*i+1), Values: values(good[i])})
		}
	}
	return msgs
}

func TestReadHandlers_SkipMalformedEntries(t *testing.T) {
	t.Parallel()
	good := readEvents(3, []int64{7, 8})
	good[1].UserID = 42

	t.Run("read count", func(t *testing.T) {
		t.Parallel()
		f := &fakeReads{}
		if err := job.ReadCountHandler(f, testenv.Logger(t))(t.Context(), mixedBatch(good)); err != nil {
			t.Fatalf("handler = %v, want nil: malformed entries are skipped, not retried", err)
		}
		if len(f.counted) != 1 || !slices.Equal(f.counted[0], good) {
			t.Fatalf("counted %v, want only the well-formed %v", f.counted, good)
		}
		if !slices.Equal(f.consumers, []string{job.GroupReadCount}) {
			t.Errorf("deduplicated under %q, want %q", f.consumers, job.GroupReadCount)
		}
	})

	t.Run("read history", func(t *testing.T) {
		t.Parallel()
		f := &fakeReads{}
		if err := job.ReadHistoryHandler(f, testenv.Logger(t))(t.Context(), mixedBatch(good)); err != nil {
			t.Fatalf("handler = %v, want nil", err)
		}
		if len(f.histories) != 1 || !slices.Equal(f.histories[0], good) {
			t.Fatalf("recorded %v, want only the well-formed %v", f.histories, good)
		}
	})

	t.Run("a batch of nothing but malformed entries succeeds", func(t *testing.T) {
		t.Parallel()
		f := &fakeReads{}
		if err := job.ReadCountHandler(f, testenv.Logger(t))(t.Context(), mixedBatch(nil)); err != nil {
			t.Fatalf("handler = %v, want nil", err)
		}
		if len(f.counted) > 1 || (len(f.counted) == 1 && len(f.counted[0]) != 0) {
			t.Fatalf("counted %v, want nothing", f.counted)
		}
	})

	t.Run("a service error fails the batch, so it stays pending", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("database down")
		f := &fakeReads{err: boom}
		if err := job.ReadCountHandler(f, testenv.Logger(t))(t.Context(), mixedBatch(good)); !errors.Is(err, boom) {
			t.Errorf("read count handler = %v, want %v", err, boom)
		}
		if err := job.ReadHistoryHandler(f, testenv.Logger(t))(t.Context(), mixedBatch(good)); !errors.Is(err, boom) {
			t.Errorf("read history handler = %v, want %v", err, boom)
		}
	})
}

// Through a real consumer: malformed entries are acknowledged with their batch (not retried
// forever) and the well-formed ones counted.
func TestReadCountConsumer_AcknowledgesMalformedEntries(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	arts := e.articles(t, 2)
	good := readEvents(6, arts)
	for _, m := range mixedBatch(good) {
		if err := e.rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: e.stream, Values: m.Values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	h := job.ReadCountHandler(service.NewReadService(e.reads, nil), e.log)
	c := events.NewConsumer(e.rdb, events.ConsumerConfig{
		Stream: e.stream, Group: job.GroupReadCount, Name: "c", BatchSize: 100, BatchWait: 20 * time.Millisecond,
		ClaimIdle: 50 * time.Millisecond, ClaimEvery: 10 * time.Millisecond, Backoff: 10 * time.Millisecond,
	}, h, e.log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	testenv.WaitUntil(t, "all 11 entries are acked", func() bool { return c.Stats.Acked.Load() == 11 }, 20*time.Second)
	if got := e.pgReads(t, arts); got[arts[0]] != 3 || got[arts[1]] != 3 {
		t.Errorf("read_cnt = %v, want 3 each", got)
	}
	p, err := e.rdb.XPending(t.Context(), e.stream, job.GroupReadCount).Result()
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != 0 || c.Stats.Failures.Load() != 0 {
		t.Errorf("pending %d, failures %d; want none", p.Count, c.Stats.Failures.Load())
	}
}
