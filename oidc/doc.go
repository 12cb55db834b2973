// Package oidc holds the sign-in provider adapters: an OpenID Connect relying party (go-oidc and
// x/oauth2: discovery, authorization code with PKCE S256, ID token verification through the
// issuer's JWKS) and GitHub (OAuth 2 and its user API). They implement service.IdentityProvider
// and service.IdentityProviders; the use cases, state and storage are the service's.
package oidc
