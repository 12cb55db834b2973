package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/inkwell-dev/inkwell/domain"
)

// Message is one code to deliver.
type Message struct {
	Channel string // "email" or "phone"
	Address string
	Code    string
	Purpose Purpose // what the code is for; empty is a login code
}

// Purpose names what a delivered code is for, and so which mail template it is sent with.
type Purpose string

const (
	PurposeLogin         Purpose = "login"
	PurposeVerifyEmail   Purpose = "verify_email"
	PurposeResetPassword Purpose = "reset_password"
	// PurposeStepUp confirms a change of the account's email or password.
	PurposeStepUp Purpose = "step_up"
	// PurposeIdentityLinked tells an account a provider's identity was linked to it by its
	// verified email; the message's Code is the provider's display name.
	PurposeIdentityLinked Purpose = "identity_linked"
)

// purpose is m's purpose, login when unset.
func (m Message) purpose() Purpose {
	if m.Purpose == "" {
		return PurposeLogin
	}
	return m.Purpose
}

// Sender delivers a message.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrRejected marks a failure the gateway will repeat for the same message (a 4xx answer): it is
// not worth retrying, so it is a permanent job failure.
var ErrRejected = fmt.Errorf("%w: rejected by the delivery gateway", domain.ErrPermanent)

// LogSender "delivers" by logging, for development: the code appears in the server log.
type LogSender struct{ Log *slog.Logger }

// Send logs the message.
func (s LogSender) Send(ctx context.Context, m Message) error {
	s.Log.InfoContext(ctx, "code (dev sender: not delivered, only logged)", "purpose", m.purpose(), "channel", m.Channel, "to", m.Address, "code", m.Code)
	return nil
}

// WebhookSender POSTs the message as JSON to a gateway URL.
type WebhookSender struct {
	URL    string
	Client *http.Client
}

// Send posts the message; a 4xx answer is ErrRejected, a 5xx or network failure is transient.
func (s WebhookSender) Send(ctx context.Context, m Message) error {
	body, err := json.Marshal(map[string]string{"channel": m.Channel, "to": m.Address, "code": m.Code, "purpose": string(m.purpose())})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRejected, err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.Client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return nil
	case res.StatusCode >= 400 && res.StatusCode < 500 && res.StatusCode != http.StatusTooManyRequests:
		return fmt.Errorf("%w: status %d", ErrRejected, res.StatusCode)
	default:
		return fmt.Errorf("webhook: status %d", res.StatusCode)
	}
}

// ByChannel sends email through Email when it is set (the SMTP sender) and everything else, or
// all of it when Email is nil, through Other.
type ByChannel struct {
	Email Sender
	Other Sender
}

// Send picks the sender for m's channel.
func (b ByChannel) Send(ctx context.Context, m Message) error {
	if m.Channel == "email" && b.Email != nil {
		return b.Email.Send(ctx, m)
	}
	return b.Other.Send(ctx, m)
}
