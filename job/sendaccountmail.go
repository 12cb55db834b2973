package job

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// AccountMailSender mails a verification or password-reset code, or the notice that a
// provider's identity was linked (its code is the provider's name). Errors wrapping
// domain.ErrPermanent are not retried.
type AccountMailSender interface {
	SendAccountMail(ctx context.Context, purpose, address, code string) error
}

// SendAccountMailHandler returns the handler of send_account_mail jobs: it opens the sealed code
// with keys (the jobs table never holds it in plain text) and mails it.
func SendAccountMailHandler(sender AccountMailSender, keys service.CodeKeys) JobHandler {
	return func(ctx context.Context, j domain.Job) error {
		var p service.AccountMailPayload
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return fmt.Errorf("%w: malformed %s payload", domain.ErrPermanent, j.Kind)
		}
		if domain.AccountCodePurpose(p.Purpose) == domain.PurposeIdentityLinked {
			// A notice without a code: the mail names the provider in the code's place.
			if p.Address == "" || p.Provider == "" {
				return fmt.Errorf("%w: malformed %s payload", domain.ErrPermanent, j.Kind)
			}
			return sender.SendAccountMail(ctx, p.Purpose, p.Address, p.Provider)
		}
		code, err := openSealedCode(keys, j.Kind, p.Address, p.SealedCode)
		if err != nil {
			return err
		}
		switch domain.AccountCodePurpose(p.Purpose) {
		case domain.PurposeVerifyEmail, domain.PurposeResetPassword:
		default:
			return fmt.Errorf("%w: send_account_mail purpose %q", domain.ErrPermanent, p.Purpose)
		}
		return sender.SendAccountMail(ctx, p.Purpose, p.Address, code)
	}
}
