package job

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/inkwell-dev/inkwell/domain"
)

// WebhookDeliverer makes one attempt at a delivery (service.WebhookService).
type WebhookDeliverer interface {
	Deliver(ctx context.Context, deliveryID int64, last bool) error
}

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
