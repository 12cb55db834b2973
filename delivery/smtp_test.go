package delivery_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/inkwell-dev/inkwell/delivery"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

var validity = delivery.MailValidity{Login: 10 * time.Minute, VerifyEmail: 24 * time.Hour, ResetPassword: 15 * time.Minute}

func smtpSender(t *testing.T, srv *testenv.SMTPServer, mode delivery.TLSMode, user, password string) *delivery.SMTPSender {
	t.Helper()
	s, err := delivery.NewSMTPSender(delivery.SMTPConfig{
		Host: srv.Host, Port: srv.Port, Username: user, Password: password, From: "inkwell <no-reply@inkwell.test>",
		TLS: mode, Timeout: 5 * time.Second, TLSConfig: &tls.Config{RootCAs: srv.Roots, ServerName: srv.Host, MinVersion: tls.VersionTLS12},
		Validity: validity,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSMTPSender_Delivers sends each kind of mail through a real SMTP server on loopback, over
// each TLS mode, and reads it back: envelope, headers, both parts, the code.
func TestSMTPSender_Delivers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, serverTLS string
		mode            delivery.TLSMode
		user, password  string
		purpose         delivery.Purpose
		subject, says   string
	}{
		{"none_without_auth/login", "none", delivery.TLSNone, "", "", delivery.PurposeLogin, "sign-in code", "valid for 10 minutes"},
		{"starttls_with_auth/verify_email", "starttls", delivery.TLSStartTLS, "mailer", "s3cret", delivery.PurposeVerifyEmail, "Confirm your email", "valid for 24 hours"},
		{"implicit_tls_with_auth/reset_password", "tls", delivery.TLSImplicit, "mailer", "s3cret", delivery.PurposeResetPassword, "Reset your inkwell password", "valid for 15 minutes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{TLS: tc.serverTLS, Username: tc.user, Password: tc.password})
			s := smtpSender(t, srv, tc.mode, tc.user, tc.password)
			err := s.Send(context.Background(), delivery.Message{Channel: "email", Address: "reader@example.com", Code: "ABCDE-23456", Purpose: tc.purpose})
			if err != nil {
				t.Fatalf("send: %v", err)
			}
			m := srv.Next(t)
			if m.Envelope.From != "no-reply@inkwell.test" || len(m.Envelope.To) != 1 || m.Envelope.To[0] != "reader@example.com" {
				t.Fatalf("envelope %s -> %v", m.Envelope.From, m.Envelope.To)
			}
			if !strings.Contains(m.Header.Get("Subject"), tc.subject) || m.Header.Get("To") != "<reader@example.com>" ||
				!strings.Contains(m.Header.Get("From"), "no-reply@inkwell.test") || m.Header.Get("Message-ID") == "" || m.Header.Get("Date") == "" {
				t.Fatalf("headers %v", m.Header)
			}
			for part, body := range map[string]string{"text": m.Text, "html": m.HTML} {
				if !strings.Contains(body, "ABCDE-23456") || !strings.Contains(body, tc.says) {
					t.Fatalf("%s part lacks the code or %q:\n%s", part, tc.says, body)
				}
			}
			if !strings.Contains(m.HTML, "<p") || strings.Contains(m.Text, "<p") {
				t.Fatalf("the HTML part is not HTML, or the text part is:\n%s\n---\n%s", m.HTML, m.Text)
			}
		})
	}
}

func TestSMTPSender_Failures(t *testing.T) {
	t.Parallel()
	msg := delivery.Message{Channel: "email", Address: "reader@example.com", Code: "ABCDE-23456", Purpose: delivery.PurposeLogin}

	t.Run("permanent_refusal_is_rejected_and_not_retried", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{Reject: &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}})
		if err := smtpSender(t, srv, delivery.TLSNone, "", "").Send(context.Background(), msg); !errors.Is(err, delivery.ErrRejected) {
			t.Fatalf("send: %v, want ErrRejected", err)
		}
	})
	t.Run("temporary_refusal_is_transient", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{Reject: &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"}})
		err := smtpSender(t, srv, delivery.TLSNone, "", "").Send(context.Background(), msg)
		if err == nil || errors.Is(err, delivery.ErrRejected) {
			t.Fatalf("send: %v, want a transient error", err)
		}
	})
	t.Run("wrong_password_fails", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{TLS: "starttls", Username: "mailer", Password: "s3cret"})
		if err := smtpSender(t, srv, delivery.TLSStartTLS, "mailer", "wrong").Send(context.Background(), msg); err == nil {
			t.Fatal("send with a wrong password succeeded")
		}
		select {
		case m := <-srv.Mail:
			t.Fatalf("the server accepted a mail: %s", m.Data)
		default:
		}
	})
	t.Run("starttls_required_but_not_offered_fails", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{TLS: "none"})
		if err := smtpSender(t, srv, delivery.TLSStartTLS, "", "").Send(context.Background(), msg); err == nil {
			t.Fatal("send went out unencrypted although STARTTLS is required")
		}
	})
	t.Run("untrusted_certificate_fails", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{TLS: "tls"})
		s, err := delivery.NewSMTPSender(delivery.SMTPConfig{Host: srv.Host, Port: srv.Port, From: "no-reply@inkwell.test",
			TLS: delivery.TLSImplicit, Timeout: 5 * time.Second, Validity: validity})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(context.Background(), msg); err == nil {
			t.Fatal("send to a server with an unverifiable certificate succeeded")
		}
	})
	t.Run("unreachable_server_is_transient_within_the_timeout", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
		s, _ := delivery.NewSMTPSender(delivery.SMTPConfig{Host: srv.Host, Port: 1, From: "no-reply@inkwell.test", TLS: delivery.TLSNone,
			Timeout: time.Second, Validity: validity})
		if err := s.Send(context.Background(), msg); err == nil || errors.Is(err, delivery.ErrRejected) {
			t.Fatalf("send to a closed port: %v, want a transient error", err)
		}
	})
}

func TestNewSMTPSender_RefusesBadSettings(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]delivery.SMTPConfig{
		"no_host":      {Port: 587, From: "a@example.com", TLS: delivery.TLSStartTLS},
		"bad_port":     {Host: "smtp.example.com", Port: 70000, From: "a@example.com", TLS: delivery.TLSStartTLS},
		"bad_from":     {Host: "smtp.example.com", Port: 587, From: "not an address", TLS: delivery.TLSStartTLS},
		"bad_tls_mode": {Host: "smtp.example.com", Port: 587, From: "a@example.com", TLS: "ssl3"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := delivery.NewSMTPSender(cfg); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestByChannel_SendsEmailBySMTPAndPhonesElsewhere(t *testing.T) {
	t.Parallel()
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	var other []delivery.Message
	b := delivery.ByChannel{Email: smtpSender(t, srv, delivery.TLSNone, "", ""), Other: senderFunc(func(_ context.Context, m delivery.Message) error {
		other = append(other, m)
		return nil
	})}
	if err := b.Send(context.Background(), delivery.Message{Channel: "phone", Address: "+4915112345678", Code: "123456"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(context.Background(), delivery.Message{Channel: "email", Address: "reader@example.com", Code: "123456"}); err != nil {
		t.Fatal(err)
	}
	if m := srv.Next(t); !strings.Contains(m.Text, "123456") || len(other) != 1 || other[0].Channel != "phone" {
		t.Fatalf("smtp got %q, the other sender %v", m.Text, other)
	}
}

type senderFunc func(context.Context, delivery.Message) error

func (f senderFunc) Send(ctx context.Context, m delivery.Message) error { return f(ctx, m) }
