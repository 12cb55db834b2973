package ioc

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/delivery"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/service"
)

// NewCodeSender returns the login-code sender, wrapped for resilience.
func NewCodeSender(cfg *Config, log *slog.Logger) *delivery.Resilient {
	var next delivery.Sender = delivery.LogSender{Log: log}
	if cfg.CodeSender == "webhook" {
		next = delivery.WebhookSender{URL: cfg.CodeWebhookURL, Client: &http.Client{}}
	}
	return delivery.NewResilient(next, delivery.ResilienceConfig{
		Timeout: 5 * time.Second, Retries: 2, RetryDelay: 200 * time.Millisecond, MaxInFlight: 16,
		FailuresToOpen: 5, OpenFor: 30 * time.Second,
	})
}

// NewCodePolicy is the one-time code policy: valid 10 minutes, one send a minute, 3 wrong tries.
func NewCodePolicy() cache.CodePolicy {
	return cache.CodePolicy{Validity: 10 * time.Minute, Resend: time.Minute, Attempts: 3}
}

// NewArticlePreloader returns the worker that preloads article details off the request path: two
// workers, up to 64 waiting (more are dropped), 2 s each. The App runs it among the Workers.
func NewArticlePreloader(articles *repository.ArticleRepository, log *slog.Logger) *job.Preloader {
	return job.NewPreloader(job.PreloadConfig{Queue: 64, Workers: 2, Timeout: 2 * time.Second}, articles.Preload, log)
}

// OutboxStream is the key of the stream the outbox relay writes to.
type OutboxStream string

// NewOutboxStream returns the outbox stream key under the instance's prefix.
func NewOutboxStream(ks cache.Keyspace) OutboxStream { return OutboxStream(ks.Key("stream", "outbox")) }

// Durable is the Postgres-backed background work: the default queue's runner, the lease reaper,
// the outbox relay, their LISTEN wake-ups, and the notifications consumer.
type Durable Workers

// NewDurable builds the durable-work workers.
func NewDurable(cfg *Config, rdb redis.UniversalClient, queue *repository.JobQueue, outbox *repository.Outbox, stream OutboxStream,
	sender *delivery.Resilient, notifications *service.NotificationService, now func() time.Time, log *slog.Logger) Durable {
	owner := consumerName()
	runner := job.NewRunner(queue, job.QueueConfig{
		Queue: service.QueueDefault, Concurrency: cfg.QueueConcurrency, Lease: cfg.QueueLease, Poll: cfg.QueuePoll,
		BackoffBase: time.Second, BackoffMax: 5 * time.Minute, Grace: cfg.ShutdownTimeout / 2,
	}, map[string]job.JobHandler{service.JobKindSendCode: job.SendCodeHandler(sender)}, owner, now, log)
	relay := job.NewRelay(outbox, events.NewStreamWriter(rdb), job.RelayConfig{
		Stream: string(stream), Batch: 100, Lease: 30 * time.Second, Poll: cfg.OutboxPoll,
	}, owner, now, log)
	return Durable{
		runner,
		job.NewReaper(queue, cfg.QueueReapEvery, now, log),
		relay,
		listener{name: "jobs", log: log, listen: func(ctx context.Context) error {
			return queue.Listen(ctx, func(q string) {
				if q == service.QueueDefault {
					runner.Wake()
				}
			})
		}},
		listener{name: "outbox", log: log, listen: func(ctx context.Context) error { return outbox.Listen(ctx, relay.Wake) }},
		events.NewConsumer(rdb, events.ConsumerConfig{
			Stream: string(stream), Group: job.GroupNotifications, Name: owner, BatchSize: 100, BatchWait: 100 * time.Millisecond,
			ClaimIdle: cfg.ConsumerClaimIdle, ClaimEvery: cfg.ConsumerClaimTick,
		}, job.NotificationsHandler(notifications, log), log),
	}
}

// listener keeps a LISTEN connection open, reconnecting after failures. Notifications only wake
// workers that poll anyway, so an outage here only adds latency.
type listener struct {
	name   string
	log    *slog.Logger
	listen func(ctx context.Context) error
}

func (l listener) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if err := l.listen(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("LISTEN connection lost; reconnecting", "channel", l.name, "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
	return nil
}
