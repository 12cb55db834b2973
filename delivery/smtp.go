package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	mail "github.com/wneessen/go-mail"
)

// TLSMode is how the SMTP connection is protected.
type TLSMode string

const (
	TLSStartTLS TLSMode = "starttls" // plain connect, then STARTTLS, which is required (port 587)
	TLSImplicit TLSMode = "tls"      // TLS from the first byte (port 465)
	TLSNone     TLSMode = "none"     // no encryption: only for a relay on the same host or network
)

// SMTPConfig configures SMTPSender.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string // empty: no authentication
	Password string
	From     string // the From address, e.g. "inkwell <no-reply@example.com>"
	TLS      TLSMode
	Timeout  time.Duration // connect and each command
	// TLSConfig verifies the server; nil verifies Host against the system's roots.
	TLSConfig *tls.Config
	Validity  MailValidity
}

// SMTPSender mails codes through an SMTP server, one connection per message, as a plain-text
// and an HTML alternative rendered from the embedded templates.
type SMTPSender struct {
	cfg  SMTPConfig
	tmpl *mailTemplates
	opts []mail.Option
}

// NewSMTPSender checks cfg and parses the templates.
func NewSMTPSender(cfg SMTPConfig) (*SMTPSender, error) {
	tmpl, err := parseMailTemplates(cfg.Validity)
	if err != nil {
		return nil, err
	}
	if cfg.Host == "" || cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("smtp: host and a port in 1..65535 are required")
	}
	if err := mail.NewMsg().From(cfg.From); err != nil {
		return nil, fmt.Errorf("smtp: from address %q: %w", cfg.From, err)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = SMTPTimeout
	}
	tlsConfig := cfg.TLSConfig
	if tlsConfig == nil {
		tlsConfig = &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12}
	}
	opts := []mail.Option{mail.WithPort(cfg.Port), mail.WithTimeout(cfg.Timeout), mail.WithTLSConfig(tlsConfig)}
	switch cfg.TLS {
	case TLSStartTLS:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case TLSImplicit:
		opts = append(opts, mail.WithSSL())
	case TLSNone:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		return nil, fmt.Errorf("smtp: TLS mode must be starttls, tls or none, not %q", cfg.TLS)
	}
	if cfg.Username != "" {
		// Auto-discovery picks the strongest mechanism the server offers and never sends a
		// password in the clear over an unencrypted connection.
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(cfg.Username), mail.WithPassword(cfg.Password))
	}
	return &SMTPSender{cfg: cfg, tmpl: tmpl, opts: opts}, nil
}

// Send mails m. A server's permanent refusal (5xx) or an address it cannot take is ErrRejected;
// connection failures, timeouts and temporary refusals (4xx) are transient, for the retries.
func (s *SMTPSender) Send(ctx context.Context, m Message) error {
	r, err := s.tmpl.render(m)
	if err != nil {
		return err
	}
	msg := mail.NewMsg()
	if err := msg.From(s.cfg.From); err != nil {
		return fmt.Errorf("%w: from address: %v", ErrRejected, err)
	}
	if err := msg.To(m.Address); err != nil {
		return fmt.Errorf("%w: recipient address: %v", ErrRejected, err)
	}
	msg.Subject(r.Subject)
	msg.SetMessageID()
	msg.SetDate()
	msg.SetBodyString(mail.TypeTextPlain, r.Text)
	msg.AddAlternativeString(mail.TypeTextHTML, r.HTML)

	client, err := mail.NewClient(s.cfg.Host, s.opts...)
	if err != nil {
		return fmt.Errorf("%w: smtp client: %v", ErrRejected, err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		var serr *mail.SendError
		if errors.As(err, &serr) && !serr.IsTemp() && serr.ErrorCode() >= 500 {
			return fmt.Errorf("%w: smtp: %v", ErrRejected, err)
		}
		return fmt.Errorf("smtp: %w", err)
	}
	return nil
}

// SMTPTimeout bounds connecting and each SMTP command (a setting until 0.1.0): servers answer in
// well under a second, and a send is a background job whose retry is cheaper than a stuck worker.
const SMTPTimeout = 10 * time.Second
