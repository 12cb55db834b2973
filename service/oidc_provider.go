package service

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=oidc_provider.go -destination=mocks/oidc_provider_mock.go -package=mocks

// IdentityProvider is one configured sign-in provider: an OpenID Connect issuer, or GitHub
// (OAuth 2 with its user API). Its adapters live in the oidc package.
type IdentityProvider interface {
	Name() string
	DisplayName() string
	// Available reports whether the provider can be used now: its discovery has succeeded. An
	// unavailable provider keeps retrying in the background.
	Available() bool
	// AuthCodeURL is where the browser signs in: the authorization endpoint with
	// response_type=code, client_id, redirect_uri, state, nonce, and the PKCE S256 challenge of
	// verifier. ErrProviderUnavailable while discovery has not succeeded.
	AuthCodeURL(state, nonce, verifier, redirectURI string) (string, error)
	// Exchange trades code, with the PKCE verifier, at the token endpoint and verifies the answer:
	// the ID token's signature through the issuer's JWKS (following key rotation), iss, aud, azp,
	// exp and nonce. Failures are *domain.SignInFailure (exchange_failed, invalid_token,
	// nonce_mismatch, provider_unavailable).
	Exchange(ctx context.Context, code, verifier, redirectURI, nonce string) (domain.ExternalIdentity, error)
}

// IdentityProviders are the configured providers, in the order of INKWELL_OIDC_PROVIDERS.
type IdentityProviders interface {
	List() []IdentityProvider
	// Get returns the provider of that name, or false when none is configured.
	Get(name string) (IdentityProvider, bool)
}
