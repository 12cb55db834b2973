package ioc

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// OIDCProvider is one sign-in provider's settings, from the INKWELL_OIDC_<NAME>_* family.
type OIDCProvider struct {
	Name, DisplayName, Issuer, ClientID, ClientSecret string
	Scopes                                            []string
}

// GitHubProvider is the built-in provider name with an adapter of its own (OAuth 2 and GitHub's
// user API, not OpenID Connect): it needs no issuer.
const GitHubProvider = "github"

var providerName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// OIDCProviders reads the settings of every provider INKWELL_OIDC_PROVIDERS lists: each needs
// its client id and, unless it is github, its issuer. The error names every missing variable.
func OIDCProviders(c *Config) ([]OIDCProvider, error) {
	var out []OIDCProvider
	var errs []error
	getenv := c.SignIn.Env
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, name := range splitList(c.SignIn.Providers) {
		if !providerName.MatchString(name) {
			continue // validateProviderNames reports it
		}
		env := func(suffix string) string {
			return strings.TrimSpace(getenv("INKWELL_OIDC_" + strings.ToUpper(name) + "_" + suffix))
		}
		p := OIDCProvider{Name: name, DisplayName: env("DISPLAY_NAME"), Issuer: env("ISSUER"), ClientID: env("CLIENT_ID"),
			ClientSecret: env("CLIENT_SECRET")}
		if s := env("SCOPES"); s != "" {
			p.Scopes = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
		}
		var missing []string
		if p.Issuer == "" && name != GitHubProvider {
			missing = append(missing, "INKWELL_OIDC_"+strings.ToUpper(name)+"_ISSUER")
		}
		if p.ClientID == "" {
			missing = append(missing, "INKWELL_OIDC_"+strings.ToUpper(name)+"_CLIENT_ID")
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("sign-in provider %q (INKWELL_OIDC_PROVIDERS) needs %s", name, strings.Join(missing, " and ")))
			continue
		}
		if p.Issuer != "" {
			if u, err := url.Parse(p.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				errs = append(errs, fmt.Errorf("INKWELL_OIDC_%s_ISSUER must be an http(s) URL, not %q", strings.ToUpper(name), p.Issuer))
				continue
			}
		}
		if p.DisplayName == "" {
			p.DisplayName = defaultDisplayName(name)
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// PublicURL is INKWELL_PUBLIC_URL, or http://localhost:PORT of INKWELL_ADDR (PublicBaseURL).
func (c *Config) PublicURL() string { return PublicBaseURL(c.Server) }

// RedirectOrigins is INKWELL_OIDC_REDIRECT_ALLOW as a list.
func (c *Config) RedirectOrigins() []string { return splitList(c.SignIn.RedirectAllow) }

func defaultDisplayName(name string) string {
	switch name {
	case "github":
		return "GitHub"
	case "google":
		return "Google"
	case "gitlab":
		return "GitLab"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func validateProviderNames(v string) error {
	seen := map[string]bool{}
	for _, name := range splitList(v) {
		if !providerName.MatchString(name) {
			return fmt.Errorf("%q: a provider name is lower-case letters, digits and '_', starting with a letter", name)
		}
		if seen[name] {
			return fmt.Errorf("%q is listed twice", name)
		}
		seen[name] = true
	}
	return nil
}

func validateOrigins(v string) error {
	for _, o := range splitList(v) {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
			return fmt.Errorf("%q: want an origin, scheme://host[:port]", o)
		}
	}
	return nil
}
