package inkwell

import (
	"crypto/sha256"
	"log/slog"

	"github.com/google/wire"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/webhooks"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/webhookdial"
)

// webhookSet wires webhooks (#33): the room, the sender with the SSRF rules, the use case, its
// workers (the webhooks queue's runner and the outbox stream's fan-out consumer).
var webhookSet = wire.NewSet(
	webhooks.ProviderSet, NewWebhookSettings, NewWebhookSender, service.NewWebhookService, NewWebhookWorkers,
	wire.Bind(new(service.WebhookStore), new(*webhooks.Store)),
	wire.Bind(new(service.WebhookSender), new(*webhookdial.Sender)),
	wire.Bind(new(web.WebhookService), new(*service.WebhookService)),
)

// WebhookConcurrency is how many deliveries one instance attempts at once: each waits on a
// remote endpoint (up to domain.WebhookTimeout), and one endpoint has one delivery in flight at a
// time (its order), so this is the number of endpoints served at once.
const WebhookConcurrency = 32

// NewWebhookSettings returns the webhooks' settings: INKWELL_WEBHOOK_KEY, or when it is unset a
// key derived from the JWT secret (SHA-256 of a label and the secret), with a warning in prod (an
// info line in dev).
func NewWebhookSettings(cfg *ioc.Config, log *slog.Logger) (service.WebhookSettings, error) {
	s := service.WebhookSettings{AllowPrivate: cfg.Webhooks.AllowPrivate, Now: cfg.Tune.WebhookClock}
	if cfg.Webhooks.Key != "" {
		key, err := ioc.ParseWebhookKey(cfg.Webhooks.Key)
		if err != nil {
			return s, err
		}
		s.Key = key
		return s, nil
	}
	sum := sha256.Sum256([]byte("inkwell webhook secrets\x00" + cfg.Auth.JWTSecret))
	s.Key = sum[:]
	msg := "INKWELL_WEBHOOK_KEY is not set: webhook secrets are encrypted with a key derived from the JWT secret (set INKWELL_WEBHOOK_KEY in production)"
	if cfg.Server.Env == "prod" {
		log.Warn(msg)
	} else {
		log.Info(msg) // the dev default (make run, tests): no warning on a healthy start
	}
	return s, nil
}

// NewWebhookSender returns the sender deliveries go through.
func NewWebhookSender(cfg *ioc.Config) *webhookdial.Sender {
	return webhookdial.New(webhookdial.Config{AllowPrivate: cfg.Webhooks.AllowPrivate})
}

// WebhookWorkers are the webhooks queue's runner; NewDurable runs it (the jobs listener wakes it).
// There is no fan-out worker: deliveries are added in the transaction of the write that makes the
// event, by triggers (migration 00038), so an endpoint's deliveries are numbered in commit order.
type WebhookWorkers struct {
	Runner *job.Runner
}

// NewWebhookWorkers builds them. The retry base and cap are domain.WebhookRetry's (tests shorten them).
func NewWebhookWorkers(cfg *ioc.Config, queue *durable.JobQueue, svc *service.WebhookService, jobs job.JobObserver, log *slog.Logger) WebhookWorkers {
	retry := domain.WebhookRetry
	retry.Base = ioc.Or(cfg.Tune.WebhookRetryBase, retry.Base)
	retry.Max = ioc.Or(cfg.Tune.WebhookRetryMax, retry.Max)
	return WebhookWorkers{
		Runner: job.NewRunner(queue, job.QueueConfig{
			Queue: domain.WebhookQueue, Concurrency: WebhookConcurrency, Lease: job.QueueLease, Poll: ioc.Or(cfg.Tune.QueuePoll, job.QueuePoll),
			Retry: retry, Grace: cfg.Server.ShutdownTimeout / 2, Observer: jobs,
		}, map[string]job.JobHandler{domain.WebhookJobKind: job.WebhookDeliverHandler(svc)}, consumerName(), log),
	}
}
