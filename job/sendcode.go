package job

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// CodeSender delivers a login code. Errors wrapping domain.ErrPermanent are not retried.
type CodeSender interface {
	SendCode(ctx context.Context, channel, address, code string) error
}

// SendCodeHandler returns the handler of send_code jobs: it opens the sealed code with keys (the
// jobs table never holds it in plain text) and delivers it.
func SendCodeHandler(sender CodeSender, keys service.CodeKeys) JobHandler {
	return func(ctx context.Context, j domain.Job) error {
		var p service.SendCodePayload
		if err := json.Unmarshal(j.Payload, &p); err != nil || p.Address == "" || p.SealedCode == "" {
			return fmt.Errorf("%w: malformed send_code payload", domain.ErrPermanent)
		}
		code, err := keys.Open(p.Address, p.SealedCode)
		if err != nil {
			return fmt.Errorf("%w: %w", domain.ErrPermanent, err)
		}
		return sender.SendCode(ctx, p.Channel, p.Address, code)
	}
}
