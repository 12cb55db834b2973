package job_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/webhooks"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/webhookdial"
)

// BenchmarkWebhookDeliveries measures signed webhook deliveries per second to a local receiver
// (#33): b.N deliveries spread over 64 endpoints (each in its own order: one in flight per
// endpoint), through the real PostgreSQL queue, the delivery job (decrypt, sign, POST, record,
// enqueue the endpoint's next) and a runner of 64 slots woken by LISTEN/NOTIFY as in production.
// The deliveries are added before the timer starts; it stops when the receiver has taken b.N.
// It reports deliveries/s and cpu-µs/delivery: this process's user+system CPU (getrusage) over
// the timed window divided by b.N, i.e. the queue's runner (claims, LISTEN wake-ups), the
// delivery job (decrypt the secret, sign, POST, record the attempt, enqueue the endpoint's next),
// the HTTP client and the local receiver; PostgreSQL's own CPU is not in it. make bench-realtime
// (scripts/bench-realtime.sh) runs it with -benchtime 20000x.
//
//	go test -run '^$' -bench BenchmarkWebhookDeliveries -benchtime 20000x ./job/
func BenchmarkWebhookDeliveries(b *testing.B) {
	const endpoints = 64
	e := newQueueEnv(b, 96)
	ctx := context.Background()
	var got atomic.Int64
	allDone := make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		if got.Add(1) == int64(b.N) {
			close(allDone)
		}
	}))
	defer recv.Close()

	store := webhooks.NewStore(e.pool, dao.New(), e.queue)
	key := make([]byte, 32)
	svc, err := service.NewWebhookService(store, webhookdial.New(webhookdial.Config{AllowPrivate: true}), (*repository.UserRepository)(nil),
		service.WebhookSettings{Key: key, AllowPrivate: true}, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	admin := domain.Credential{UserID: 1}
	var ids []int64
	for i := range endpoints {
		var owner int64
		if err := e.pool.QueryRow(ctx, `INSERT INTO users (email, username, password_hash) VALUES ($1, $1, 'x') RETURNING id`,
			fmt.Sprintf("bench%d@example.com", i)).Scan(&owner); err != nil {
			b.Fatal(err)
		}
		admin.UserID = owner
		w, _, err := svc.Create(ctx, admin, false, service.WebhookInput{URL: new(recv.URL + "/in"), Events: []string{domain.WebhookArticlePublished}})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	body := `{"type":"article.published","timestamp":"2026-01-01T00:00:00Z","data":{"article":{"id":1,"slug":"a","title":"A","authorId":1}}}`
	for i := range b.N {
		if err := store.Add(ctx, ids[i%endpoints], fmt.Sprintf("bench-%d", i), domain.WebhookArticlePublished, body); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.pool.Exec(ctx, `VACUUM ANALYZE jobs`); err != nil {
		b.Fatal(err)
	}
	r := newRunner(b, e.queue, runnerOpts{Queue: domain.WebhookQueue, Owner: "bench", Concurrency: endpoints, Lease: 30 * time.Second, Poll: time.Second},
		map[string]job.JobHandler{domain.WebhookJobKind: job.WebhookDeliverHandler(svc)})
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = e.queue.ListenDue(runCtx, func(q string, due time.Time) {
			if q == domain.WebhookQueue {
				r.WakeAt(due)
			}
		})
	})
	b.ResetTimer()
	cpuBefore := processCPU()
	began := time.Now()
	wg.Go(func() { _ = r.Run(runCtx) })
	select {
	case <-allDone:
	case <-time.After(10 * time.Minute):
		b.Fatalf("only %d of %d deliveries after 10 minutes", got.Load(), b.N)
	}
	elapsed := time.Since(began)
	cpu := processCPU() - cpuBefore
	b.StopTimer()
	stop()
	wg.Wait()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	// The CPU of this process (runner, job, sender and receiver; PostgreSQL's is not counted).
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/delivery")
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
