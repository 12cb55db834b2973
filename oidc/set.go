package oidc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/inkwell-dev/inkwell/service"
)

// GitHubName is the built-in provider name that means GitHub (OAuth 2, not OIDC).
const GitHubName = "github"

// Config lists the sign-in providers in the order they are shown.
type Config struct {
	Providers []ProviderConfig
}

// ProviderConfig is one provider. Issuer is ignored for github. Scopes default to
// "openid email profile" (github: "read:user user:email").
type ProviderConfig struct {
	Name         string
	DisplayName  string
	Issuer       string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// Set is the configured providers; it implements service.IdentityProviders.
type Set struct {
	list   []service.IdentityProvider
	byName map[string]service.IdentityProvider
}

var _ service.IdentityProviders = (*Set)(nil)

// New builds the providers of cfg. Discovery of an unreachable issuer does not fail start-up:
// that provider is unavailable and retries in the background until cleanup.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Set, func(), error) {
	return newSet(ctx, cfg, Options{Log: log}, GitHubEndpoints{})
}

func newSet(ctx context.Context, cfg Config, opts Options, github GitHubEndpoints) (*Set, func(), error) {
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	s := &Set{byName: map[string]service.IdentityProvider{}}
	var stops []func()
	cleanup := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for _, pc := range cfg.Providers {
		var p service.IdentityProvider
		if pc.Name == GitHubName {
			p = NewGitHub(pc, github, opts)
		} else {
			op, stop := NewOIDCProvider(ctx, pc, opts)
			stops = append(stops, stop)
			p = op
		}
		s.list = append(s.list, p)
		s.byName[pc.Name] = p
	}
	return s, cleanup, nil
}

func (c Config) validate() error {
	seen := map[string]bool{}
	var errs []error
	for _, p := range c.Providers {
		switch {
		case p.Name == "":
			errs = append(errs, errors.New("oidc: a provider without a name"))
		case seen[p.Name]:
			errs = append(errs, fmt.Errorf("oidc: provider %q configured twice", p.Name))
		case p.ClientID == "":
			errs = append(errs, fmt.Errorf("oidc: provider %q has no client id", p.Name))
		case p.Name != GitHubName && p.Issuer == "":
			errs = append(errs, fmt.Errorf("oidc: provider %q has no issuer", p.Name))
		}
		seen[p.Name] = true
	}
	return errors.Join(errs...)
}

func (s *Set) List() []service.IdentityProvider { return s.list }

func (s *Set) Get(name string) (service.IdentityProvider, bool) {
	p, ok := s.byName[name]
	return p, ok
}
