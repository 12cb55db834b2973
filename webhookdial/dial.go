// Package webhookdial sends webhook deliveries (#33) with the SSRF rules: an HTTP client whose
// dialer refuses, on the address it is about to connect to (after resolution, so DNS rebinding
// cannot pass), every address domain.WebhookAddrAllowed refuses, unless private networks are
// allowed (development and tests); no redirects followed; domain.WebhookTimeout per attempt; at
// most domain.WebhookMaxAnswer bytes of an answer read.
package webhookdial

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

// ErrRefusedAddress is a connection the dialer refused: the address is private, loopback,
// link-local, unique-local, multicast or unspecified.
var ErrRefusedAddress = errors.New("refused address: private, loopback, link-local or multicast")

// Sender posts signed deliveries.
type Sender struct {
	client *http.Client
}

// Config tunes the sender.
type Config struct {
	// AllowPrivate lets deliveries reach any address (INKWELL_WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
	// Resolver resolves host names (nil: net.DefaultResolver); tests use one of their own.
	Resolver *net.Resolver
	// Timeout bounds one attempt (0: domain.WebhookTimeout).
	Timeout time.Duration
}

// Control refuses a connection to an address deliveries may not reach. It runs on the address
// the socket is about to connect to, after resolution.
func Control(allowPrivate bool) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
		}
		if !domain.WebhookAddrAllowed(ap.Addr()) {
			return fmt.Errorf("%w: %s", ErrRefusedAddress, ap.Addr())
		}
		return nil
	}
}

// New returns a sender.
func New(cfg Config) *Sender {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = domain.WebhookTimeout
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: cfg.Resolver, Control: Control(cfg.AllowPrivate)}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would connect for us, past the dialer's rules
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &Sender{client: &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// A redirect is the endpoint's answer, not an instruction: it is recorded, never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Send posts body to url with the headers and reports the answer; the error of a refused or failed
// connection is in the answer.
func (s *Sender) Send(ctx context.Context, url string, headers map[string]string, body []byte) domain.WebhookAnswer {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return domain.WebhookAnswer{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "inkwell-webhooks/1")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return domain.WebhookAnswer{Latency: time.Since(start), Err: err}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, domain.WebhookMaxAnswer))
	a := domain.WebhookAnswer{StatusCode: resp.StatusCode, Latency: time.Since(start), Body: answer}
	if err != nil {
		a.Err = fmt.Errorf("reading the answer: %w", err)
	}
	return a
}
