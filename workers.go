package inkwell

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/delivery"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
)

// ReadStream is the key of the read-event stream.
type ReadStream string

// NewReadStream returns the stream key under the instance's prefix.
func NewReadStream(ks cache.Keyspace) ReadStream { return ReadStream(ks.Key("stream", "reads")) }

// NewPublisherConfig returns the settings of the publisher that takes read events off the request
// path.
func NewPublisherConfig(stream ReadStream) events.PublisherConfig {
	return events.PublisherConfig{
		Stream: string(stream), Buffer: events.ReadBuffer, BatchSize: events.ReadPublishBatch, FlushEvery: events.ReadPublishFlush,
	}
}

// NewAggregatorConfig returns the settings of the in-process tally of anonymous reads: sent every
// events.ReadTallyFlush (or at events.ReadTallyMax reads), 500 articles per batch entry, up
// to 64 failed batches kept for a retry.
func NewAggregatorConfig(tune ioc.Tuning, stream ReadStream) events.AggregatorConfig {
	return events.AggregatorConfig{
		Stream: string(stream), FlushEvery: ioc.Or(tune.ReadTallyFlush, events.ReadTallyFlush), FlushAt: events.ReadTallyMax, EntryMax: 500, RetryMax: 64,
	}
}

// Worker is a long-running background task; Run returns when its context ends.
type Worker interface {
	Run(ctx context.Context) error
}

// Workers are the background tasks the App runs beside the HTTP server.
type Workers []Worker

// NewWorkers returns every background task: the read-event publisher and the anonymous reads'
// aggregator, the stream's two consumer groups,
// the stream trimmer, the preloader, the revocation lease's renewer, and the durable
// (Postgres-backed) work.
func NewWorkers(cfg *ioc.Config, rdb redis.UniversalClient, stream ReadStream, pub *events.Publisher, agg *events.ReadAggregator, reads *service.ReadService, durable Durable,
	preload *job.Preloader, revocations *job.RevocationRenewer, searchBackfill *job.SearchBackfill, emailRecheck *job.EmailRecheck, log *slog.Logger) Workers {
	consumer := func(group string, h events.Handler) *events.Consumer {
		return events.NewConsumer(rdb, events.ConsumerConfig{
			Stream: string(stream), Group: group, Name: consumerName(),
			BatchSize: events.ConsumerBatch, BatchWait: events.ConsumerWait,
			ClaimIdle: claimIdle(cfg), ClaimEvery: claimEvery(cfg), Retry: domain.RetryPolicy{MaxAttempts: events.ConsumerMaxDeliveries},
		}, h, log)
	}
	ws := append(Workers{
		pub,
		agg,
		consumer(job.GroupReadCount, job.ReadCountHandler(reads, log)),
		consumer(job.GroupReadHistory, job.ReadHistoryHandler(reads, log)),
		events.NewTrimmer(rdb, string(stream), []string{job.GroupReadCount, job.GroupReadHistory},
			events.StreamMaxLen, events.StreamTrimEvery, log),
		preload,
		revocations,
		searchBackfill,
		emailRecheck,
	}, durable...)
	if cfg.Telemetry.PprofAddr != "" {
		ws = append(ws, ioc.NewPprofServer(cfg.Telemetry.PprofAddr, log))
	}
	return ws
}

// claimIdle and claimEvery are the stream consumers' reclaim timing (tests shorten it).
func claimIdle(cfg *ioc.Config) time.Duration {
	return ioc.Or(cfg.Tune.ConsumerClaimIdle, events.ConsumerClaimIdle)
}

func claimEvery(cfg *ioc.Config) time.Duration {
	return ioc.Or(cfg.Tune.ConsumerClaimEvery, events.ConsumerClaimEvery)
}

// consumerName is unique per process, so two instances never share pending entries by accident.
func consumerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.IntN(1<<16))
}

// NewCodeGateway returns the configured code sender, which delivery.NewResilient wraps: nothing
// sends through it unwrapped. Email goes through SMTP when INKWELL_MAIL_URL is set; the rest
// (phone codes, and email too without SMTP) through the webhook or, in development, the log.
func NewCodeGateway(cfg *ioc.Config, policy cache.CodePolicy, log *slog.Logger) (delivery.Sender, error) {
	var other delivery.Sender = delivery.LogSender{Log: log}
	m := cfg.Mail
	if hook, ok := m.CodeWebhook(); ok {
		other = delivery.WebhookSender{URL: hook, Client: &http.Client{}}
	}
	if m.URL == "" {
		return other, nil
	}
	server, err := ioc.ParseMailURL(m.URL) // Validate checked it
	if err != nil {
		return nil, fmt.Errorf("INKWELL_MAIL_URL %w", err)
	}
	smtp, err := delivery.NewSMTPSender(delivery.SMTPConfig{
		Host: server.Host, Port: server.Port, Username: server.Username, Password: server.Password, From: m.From,
		TLS: delivery.TLSMode(server.TLS), Timeout: delivery.SMTPTimeout,
		Validity: delivery.MailValidity{Login: policy.Validity}, // the account codes' validity is domain policy
	})
	if err != nil {
		return nil, err
	}
	return delivery.ByChannel{Email: smtp, Other: other}, nil
}

// NewDeliveryConfig returns the resilience settings of login-code delivery.
func NewDeliveryConfig() delivery.ResilienceConfig {
	return delivery.ResilienceConfig{
		Timeout: 5 * time.Second, Retries: 2, RetryDelay: 200 * time.Millisecond, MaxInFlight: 16,
		FailuresToOpen: 5, OpenFor: 30 * time.Second,
	}
}

// NewArticlePreloader returns the worker that preloads article details off the request path: two
// workers, up to 64 waiting (more are dropped), 2 s each. The App runs it among the Workers.
func NewArticlePreloader(articles *repository.ArticleRepository, log *slog.Logger) *job.Preloader {
	return job.NewPreloader(job.PreloadConfig{Queue: 64, Workers: 2, Timeout: 2 * time.Second}, articles.Preload, log)
}

// NewSearchBackfill returns the worker that indexes published articles without a search
// document, at start and every job.SearchBackfillEvery (one instance of a fleet at a time).
func NewSearchBackfill(articles *search.Repository, log *slog.Logger) *job.SearchBackfill {
	return job.NewSearchBackfill(articles, job.SearchBackfillEvery, log)
}

// emailRecheckEvery is how often each instance looks for canonical emails an instance of an older
// version wrote (only during a rolling upgrade past migration 00025 are there any).
const emailRecheckEvery = 5 * time.Minute

// NewEmailRecheck returns the worker that recomputes canonical emails written under the rule
// before migration 00025, at start and every emailRecheckEvery.
func NewEmailRecheck(emails *repository.UserEmails, log *slog.Logger) *job.EmailRecheck {
	return job.NewEmailRecheck(emails, emailRecheckEvery, time.After, log)
}

// NewRevocationRenewer returns the worker that renews the revocation lease (see
// service.SessionService.RenewRevocations) three times a lease, each renewal bounded by a third
// of the lease, so the lease lapses only if two renewals in a row fail on every instance.
func NewRevocationRenewer(sessions *service.SessionService, cfg service.SessionConfig, after func(time.Duration) <-chan time.Time, log *slog.Logger) *job.RevocationRenewer {
	third := cfg.RevocationLease / 3
	return job.NewRevocationRenewer(sessions, job.RevocationRenewerConfig{Every: third, Timeout: third}, after, log)
}

// OutboxStream is the key of the stream the outbox relay writes to.
type OutboxStream string

// NewOutboxStream returns the outbox stream key under the instance's prefix.
func NewOutboxStream(ks cache.Keyspace) OutboxStream { return OutboxStream(ks.Key("stream", "outbox")) }

// outboxBackoffBase is the wait before the first re-drive of an event is published; it doubles
// with every attempt, up to job.OutboxBackoffMax.
const outboxBackoffBase = 10 * time.Second

// NewRelayConfig returns the outbox relay's settings: batches of 100 under a 30 s lease, and the
// re-drive of events not applied within job.OutboxRedeliverAfter, looked for four times a
// window (at most every 30 s).
func NewRelayConfig(cfg *ioc.Config, stream OutboxStream) job.RelayConfig {
	after := ioc.Or(cfg.Tune.OutboxRedeliverAfter, job.OutboxRedeliverAfter)
	backoffMax := ioc.Or(cfg.Tune.OutboxBackoffMax, job.OutboxBackoffMax)
	return job.RelayConfig{
		Stream: string(stream), Batch: 100, Lease: 30 * time.Second, Poll: ioc.Or(cfg.Tune.OutboxPoll, job.OutboxPoll),
		Redrive: job.RedrivePolicy{
			After: after, Retry: domain.RetryPolicy{MaxAttempts: job.OutboxMaxAttempts,
				Base: min(outboxBackoffBase, backoffMax), Max: backoffMax},
		},
		RedriveEvery: min(after/4, 30*time.Second),
	}
}

// Durable is the Postgres-backed background work: the default queue's runner, the lease reaper,
// the outbox relay, their LISTEN wake-ups, the notifications consumer and the outbox stream's
// trimmer.
type Durable Workers

// NewDurable builds the durable-work workers.
func NewDurable(cfg *ioc.Config, rdb redis.UniversalClient, queue *durable.JobQueue, outbox *durable.Outbox, stream OutboxStream,
	writer *events.StreamWriter, sender *delivery.Resilient, codeKeys service.CodeKeys, notifications *service.NotificationService, jobs job.JobObserver,
	moderation *service.ModerationService, schedule *service.ArticleScheduleService, webhooks WebhookWorkers, now func() time.Time, log *slog.Logger) Durable {
	owner := consumerName()
	runner := job.NewRunner(queue, job.QueueConfig{
		Queue: service.QueueDefault, Concurrency: job.QueueConcurrency, Lease: job.QueueLease, Poll: ioc.Or(cfg.Tune.QueuePoll, job.QueuePoll),
		Retry: domain.RetryPolicy{Base: time.Second, Max: 5 * time.Minute}, Grace: cfg.Server.ShutdownTimeout / 2, Observer: jobs,
	}, map[string]job.JobHandler{
		service.JobKindSendCode:        job.SendCodeHandler(sender, codeKeys),
		service.JobKindSendAccountMail: job.SendAccountMailHandler(sender, codeKeys),
		service.JobKindSuspensionEnd:   job.SuspensionEndHandler(moderation),
		service.JobKindArticlePublish:  job.ArticlePublishHandler(schedule),
	}, owner, log)
	relay := job.NewRelay(outbox, writer, NewRelayConfig(cfg, stream), owner, now, log)
	return Durable{
		runner,
		job.NewReaper(queue, job.QueueReapEvery, log),
		relay,
		listener{name: "jobs", log: log, listen: func(ctx context.Context) error {
			// A job due later (a scheduled publication, #32) wakes the runner at its due time.
			return queue.ListenDue(ctx, func(q string, due time.Time) {
				switch q {
				case service.QueueDefault:
					runner.WakeAt(due)
				case domain.WebhookQueue:
					webhooks.Runner.WakeAt(due)
				}
			})
		}},
		listener{name: "outbox", log: log, listen: func(ctx context.Context) error { return outbox.Listen(ctx, relay.Wake) }},
		events.NewConsumer(rdb, events.ConsumerConfig{
			Stream: string(stream), Group: job.GroupNotifications, Name: owner, BatchSize: 100, BatchWait: 100 * time.Millisecond,
			ClaimIdle: claimIdle(cfg), ClaimEvery: claimEvery(cfg), Retry: domain.RetryPolicy{MaxAttempts: events.ConsumerMaxDeliveries},
		}, job.NotificationsHandler(notifications, log), log),
		// Like the read stream: cut to about events.StreamMaxLen entries, never past what the
		// notifications group has not acknowledged (or not read yet).
		events.NewTrimmer(rdb, string(stream), []string{job.GroupNotifications}, events.StreamMaxLen, events.StreamTrimEvery, log),
		// Webhooks (#33): deliveries from their own queue (added by the writes' triggers).
		webhooks.Runner,
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
