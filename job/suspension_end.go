package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// SuspensionEnder lifts a suspension whose end has come.
type SuspensionEnder interface {
	EndSuspension(ctx context.Context, userID int64) error
}

// SuspensionEndHandler returns the handler of suspension_end jobs, enqueued with a suspension to
// run at its end: on whichever instance claims it, once (a later suspension that replaced the
// ended one is left in force; a deleted account has nothing to lift).
func SuspensionEndHandler(ender SuspensionEnder) JobHandler {
	return func(ctx context.Context, j domain.Job) error {
		var p service.SuspensionEndPayload
		if err := json.Unmarshal(j.Payload, &p); err != nil || p.UserID <= 0 {
			return fmt.Errorf("%w: malformed %s payload", domain.ErrPermanent, j.Kind)
		}
		err := ender.EndSuspension(ctx, p.UserID)
		if err != nil && errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		return err
	}
}
