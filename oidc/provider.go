package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/inkwell-dev/inkwell/domain"
)

// Options are what tests (and New) tune; zero values take the defaults.
type Options struct {
	HTTPClient       *http.Client                         // default: 10 s timeout
	DiscoveryTimeout time.Duration                        // the first, blocking discovery attempt: default 3 s
	MinBackoff       time.Duration                        // first retry delay: default 1 s, doubled up to MaxBackoff
	MaxBackoff       time.Duration                        // default 1 min
	After            func(time.Duration) <-chan time.Time // the retry timer: default time.After
	Log              *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.DiscoveryTimeout <= 0 {
		o.DiscoveryTimeout = 3 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Minute
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// OIDCProvider is an OpenID Connect issuer, found by discovery.
type OIDCProvider struct {
	cfg  ProviderConfig
	opts Options

	mu         sync.RWMutex
	discovered *discovered // nil until discovery succeeds
}

type discovered struct {
	endpoint oauth2.Endpoint
	verifier *gooidc.IDTokenVerifier
}

// NewOIDCProvider tries discovery once, for at most opts.DiscoveryTimeout, so an unreachable
// issuer does not hold start-up; until it succeeds the provider is unavailable and a goroutine
// retries with capped exponential backoff until it succeeds, ctx is cancelled or stop is called.
func NewOIDCProvider(ctx context.Context, cfg ProviderConfig, opts Options) (p *OIDCProvider, stop func()) {
	p = &OIDCProvider{cfg: cfg, opts: opts.withDefaults()}
	if len(p.cfg.Scopes) == 0 {
		p.cfg.Scopes = []string{gooidc.ScopeOpenID, "email", "profile"}
	}
	ctx, cancel := context.WithCancel(ctx)
	if err := p.discover(ctx); err == nil {
		return p, cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.retry(ctx)
	}()
	return p, func() { cancel(); <-done }
}

func (p *OIDCProvider) discover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(gooidc.ClientContext(ctx, p.opts.HTTPClient), p.opts.DiscoveryTimeout)
	defer cancel()
	// go-oidc keeps only the HTTP client of this context for its key set, not its deadline.
	provider, err := gooidc.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		p.opts.Log.Warn("sign-in provider discovery failed", "provider", p.cfg.Name, "issuer", p.cfg.Issuer, "err", err)
		return err
	}
	d := &discovered{
		endpoint: provider.Endpoint(),
		verifier: provider.Verifier(&gooidc.Config{ClientID: p.cfg.ClientID}),
	}
	p.mu.Lock()
	p.discovered = d
	p.mu.Unlock()
	return nil
}

func (p *OIDCProvider) retry(ctx context.Context) {
	delay := p.opts.MinBackoff
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.opts.After(delay):
		}
		if p.discover(ctx) == nil {
			p.opts.Log.Info("sign-in provider discovered", "provider", p.cfg.Name)
			return
		}
		delay = min(delay*2, p.opts.MaxBackoff)
	}
}

func (p *OIDCProvider) current() *discovered {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.discovered
}

func (p *OIDCProvider) Name() string        { return p.cfg.Name }
func (p *OIDCProvider) DisplayName() string { return p.cfg.DisplayName }
func (p *OIDCProvider) Available() bool     { return p.current() != nil }

func (p *OIDCProvider) oauth(d *discovered, redirectURI string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: d.endpoint,
		RedirectURL: redirectURI, Scopes: p.cfg.Scopes,
	}
}

func (p *OIDCProvider) AuthCodeURL(state, nonce, verifier, redirectURI string) (string, error) {
	d := p.current()
	if d == nil {
		return "", domain.ErrProviderUnavailable
	}
	return p.oauth(d, redirectURI).AuthCodeURL(state, gooidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

func (p *OIDCProvider) Exchange(ctx context.Context, code, verifier, redirectURI, nonce string) (domain.ExternalIdentity, error) {
	d := p.current()
	if d == nil {
		return domain.ExternalIdentity{}, fail(domain.SignInProviderUnavailable, domain.ErrProviderUnavailable)
	}
	ctx = gooidc.ClientContext(ctx, p.opts.HTTPClient)
	tok, err := p.oauth(d, redirectURI).Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return domain.ExternalIdentity{}, exchangeFailure(err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return domain.ExternalIdentity{}, fail(domain.SignInInvalidToken, errors.New("no id_token in the token response"))
	}
	idToken, err := d.verifier.Verify(ctx, raw)
	if err != nil {
		return domain.ExternalIdentity{}, fail(domain.SignInInvalidToken, err)
	}
	var c claims
	if err := idToken.Claims(&c); err != nil {
		return domain.ExternalIdentity{}, fail(domain.SignInInvalidToken, err)
	}
	// OIDC Core 3.1.3.7: with several audiences azp must be there, and when there it must be us.
	if (len(idToken.Audience) > 1 && c.AZP == "") || (c.AZP != "" && c.AZP != p.cfg.ClientID) {
		return domain.ExternalIdentity{}, fail(domain.SignInInvalidToken, fmt.Errorf("azp %q is not this client", c.AZP))
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(nonce)) != 1 {
		return domain.ExternalIdentity{}, fail(domain.SignInNonceMismatch, errors.New("the ID token's nonce is not this sign-in's"))
	}
	return domain.ExternalIdentity{
		Provider: p.cfg.Name, Subject: idToken.Subject, Email: c.Email, EmailVerified: bool(c.EmailVerified),
		Name: c.Name, Username: c.PreferredUsername, Picture: httpsOnly(c.Picture),
	}, nil
}

type claims struct {
	AZP               string       `json:"azp"`
	Email             string       `json:"email"`
	EmailVerified     flexibleBool `json:"email_verified"`
	Name              string       `json:"name"`
	PreferredUsername string       `json:"preferred_username"`
	Picture           string       `json:"picture"`
}

// flexibleBool reads true or "true": some providers send email_verified as a string.
type flexibleBool bool

func (b *flexibleBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*b = flexibleBool(v)
	case string:
		*b = flexibleBool(strings.EqualFold(v, "true"))
	default:
		*b = false
	}
	return nil
}

func httpsOnly(u string) string {
	if strings.HasPrefix(u, "https://") {
		return u
	}
	return ""
}

func fail(code string, err error) error { return &domain.SignInFailure{Code: code, Err: err} }

// exchangeFailure tells a refused code (the token endpoint answered with an error) from a
// provider that could not be reached or answered garbage.
func exchangeFailure(err error) error {
	var refused *oauth2.RetrieveError
	if errors.As(err, &refused) && refused.Response != nil && refused.Response.StatusCode < 500 {
		return fail(domain.SignInExchangeFailed, err)
	}
	return fail(domain.SignInProviderUnavailable, err)
}
