package inkwell

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// NewIdentityProviders builds the sign-in providers of INKWELL_OIDC_PROVIDERS (issue #30).
// TODO(merge h-oidc-op): oidc.New with the providers' settings; until then no provider is built.
func NewIdentityProviders(cfg *ioc.Config, log *slog.Logger) (service.IdentityProviders, func(), error) {
	providers, err := ioc.OIDCProviders(cfg)
	if err != nil {
		return nil, nil, err
	}
	if len(providers) > 0 {
		return nil, nil, errors.New("sign-in providers are configured but this build has no provider adapters")
	}
	return noProviders{}, func() {}, nil
}

type noProviders struct{}

func (noProviders) List() []service.IdentityProvider            { return nil }
func (noProviders) Get(string) (service.IdentityProvider, bool) { return nil, false }

// NewSignInConfig is the sign-in flow's settings: the API's public URL (the callbacks') and the
// front-end origins a sign-in may return to.
func NewSignInConfig(cfg *ioc.Config) service.SignInConfig {
	return service.SignInConfig{PublicURL: cfg.PublicURL(), RedirectAllow: cfg.RedirectOrigins()}
}

// NewSignInCookieConfig makes the sign-in cookie Secure when the public URL is https.
func NewSignInCookieConfig(cfg *ioc.Config) web.SignInCookieConfig {
	return web.SignInCookieConfig{Secure: strings.HasPrefix(cfg.PublicURL(), "https://")}
}
