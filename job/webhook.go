package job

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

// WebhookDeliverer makes one attempt at a delivery (service.WebhookService).
type WebhookDeliverer interface {
	Deliver(ctx context.Context, deliveryID int64, last bool) error
}

// WebhookFanOut turns an outbox article event into deliveries (service.WebhookService).
type WebhookFanOut interface {
	OnArticleEvent(ctx context.Context, eventID, topic string, ev domain.ArticleEvent) error
}

// GroupWebhooks is the outbox stream's consumer group that fans events out to webhooks.
const GroupWebhooks = "webhooks"

// WebhookDeliverHandler is the webhook_deliver job: one attempt at the delivery its payload names.
// A failed attempt returns an error and the queue retries it after its backoff
// (domain.WebhookRetry); the job's last attempt is told so, and a delivery that fails it is dead.
func WebhookDeliverHandler(svc WebhookDeliverer) JobHandler {
	return func(ctx context.Context, j domain.Job) error {
		var p struct {
			Delivery int64 `json:"delivery"`
		}
		if err := json.Unmarshal(j.Payload, &p); err != nil || p.Delivery <= 0 {
			return fmt.Errorf("%w: webhook job payload %s", domain.ErrPermanent, j.Payload)
		}
		return svc.Deliver(ctx, p.Delivery, j.Attempts >= j.MaxAttempts)
	}
}

// WebhooksHandler returns the outbox stream handler that fans each article event out to the
// endpoints that take it, one delivery per (endpoint, event): applying an entry twice adds nothing.
func WebhooksHandler(svc WebhookFanOut, log *slog.Logger) events.Handler {
	return func(ctx context.Context, msgs []events.Message) error {
		for _, m := range msgs {
			id, topic, ev, err := decodeOutboxEntry(m.Values)
			if err != nil {
				log.WarnContext(ctx, "webhooks: skipping malformed outbox entry", "entry", m.ID, "err", err)
				continue
			}
			if err := svc.OnArticleEvent(ctx, id, topic, ev); err != nil {
				return err
			}
		}
		return nil
	}
}
