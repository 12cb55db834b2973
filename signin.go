package inkwell

import (
	"context"
	"log/slog"
	"strings"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/oidc"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// NewIdentityProviders builds the sign-in providers of INKWELL_OIDC_PROVIDERS (issue #30):
// discovery runs now and, for an issuer that cannot be reached, retries in the background (that
// provider is unavailable meanwhile; the server starts anyway) until the cleanup stops it.
func NewIdentityProviders(cfg *ioc.Config, log *slog.Logger) (*oidc.Set, func(), error) {
	settings, err := ioc.OIDCProviders(cfg)
	if err != nil {
		return nil, nil, err
	}
	var pcs []oidc.ProviderConfig
	for _, p := range settings {
		pcs = append(pcs, oidc.ProviderConfig{Name: p.Name, DisplayName: p.DisplayName, Issuer: p.Issuer, ClientID: p.ClientID,
			ClientSecret: p.ClientSecret, Scopes: p.Scopes})
	}
	return oidc.New(context.Background(), oidc.Config{Providers: pcs}, log)
}

// NewSignInConfig is the sign-in flow's settings: the API's public URL (the callbacks') and the
// front-end origins a sign-in may return to.
func NewSignInConfig(cfg *ioc.Config) service.SignInConfig {
	return service.SignInConfig{PublicURL: cfg.PublicURL(), RedirectAllow: cfg.RedirectOrigins()}
}

// NewSignInCookieConfig makes the sign-in cookie Secure when the public URL is https.
func NewSignInCookieConfig(cfg *ioc.Config) web.SignInCookieConfig {
	return web.SignInCookieConfig{Secure: strings.HasPrefix(cfg.PublicURL(), "https://")}
}
