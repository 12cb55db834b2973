package job

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// CodeSender delivers a one-time code for purpose (service.CodePurposeLogin or
// CodePurposeStepUp). Errors wrapping domain.ErrPermanent are not retried.
type CodeSender interface {
	SendCode(ctx context.Context, channel, address, purpose, code string) error
}

// SendCodeHandler returns the handler of send_code jobs: it opens the sealed code with keys (the
// jobs table never holds it in plain text) and delivers it.
func SendCodeHandler(sender CodeSender, keys service.CodeKeys) JobHandler {
	return func(ctx context.Context, j domain.Job) error {
		var p service.SendCodePayload
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return fmt.Errorf("%w: malformed %s payload", domain.ErrPermanent, j.Kind)
		}
		code, err := openSealedCode(keys, j.Kind, p.Address, p.SealedCode)
		if err != nil {
			return err
		}
		switch p.Purpose {
		case service.CodePurposeLogin, service.CodePurposeStepUp:
		default:
			return fmt.Errorf("%w: send_code purpose %q", domain.ErrPermanent, p.Purpose)
		}
		return sender.SendCode(ctx, p.Channel, p.Address, p.Purpose, code)
	}
}

// openSealedCode opens the code a delivery job carries sealed to address. A payload without
// either, or a seal that does not open (the secret changed since), is permanent: retrying cannot
// deliver it.
func openSealedCode(keys service.CodeKeys, kind, address, sealed string) (string, error) {
	if address == "" || sealed == "" {
		return "", fmt.Errorf("%w: malformed %s payload", domain.ErrPermanent, kind)
	}
	code, err := keys.Open(address, sealed)
	if err != nil {
		return "", fmt.Errorf("%w: %w", domain.ErrPermanent, err)
	}
	return code, nil
}
