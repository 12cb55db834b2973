package ioc

import (
	"strings"
	"testing"
)

func TestOIDCProviders_TheFamilyFromTheEnvironment(t *testing.T) {
	cfg := parse(t, map[string]string{
		"INKWELL_OIDC_PROVIDERS":            "google, corp,github",
		"INKWELL_OIDC_GOOGLE_ISSUER":        "https://accounts.google.com",
		"INKWELL_OIDC_GOOGLE_CLIENT_ID":     "gid",
		"INKWELL_OIDC_GOOGLE_CLIENT_SECRET": "gsecret",
		"INKWELL_OIDC_CORP_ISSUER":          "http://127.0.0.1:5556/dex",
		"INKWELL_OIDC_CORP_CLIENT_ID":       "inkwell",
		"INKWELL_OIDC_CORP_SCOPES":          "openid email profile groups",
		"INKWELL_OIDC_CORP_DISPLAY_NAME":    "Corp SSO",
		"INKWELL_OIDC_GITHUB_CLIENT_ID":     "ghid",
		"INKWELL_OIDC_REDIRECT_ALLOW":       "https://app.example.com, http://localhost:3000",
	})
	if err := cfg.Validate(discard); err != nil {
		t.Fatal(err)
	}
	got, err := OIDCProviders(cfg)
	if err != nil || len(got) != 3 {
		t.Fatalf("providers %+v, %v", got, err)
	}
	if got[0].Name != "google" || got[0].DisplayName != "Google" || got[0].ClientSecret != "gsecret" ||
		got[1].DisplayName != "Corp SSO" || len(got[1].Scopes) != 4 || got[2].Name != "github" || got[2].Issuer != "" {
		t.Fatalf("providers %+v", got)
	}
	if o := cfg.RedirectOrigins(); len(o) != 2 || o[1] != "http://localhost:3000" {
		t.Fatalf("origins %v", o)
	}
	if cfg.PublicURL() != "http://localhost:8080" {
		t.Fatalf("default public URL %q, want the one of INKWELL_ADDR", cfg.PublicURL())
	}
}

// TestOIDCProviders_RefusesToStart: a listed provider without its issuer or client id stops the
// server with one line naming what is missing.
func TestOIDCProviders_RefusesToStart(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"INKWELL_OIDC_PROVIDERS": "corp", "INKWELL_OIDC_CORP_CLIENT_ID": "x"}, "INKWELL_OIDC_CORP_ISSUER"},
		{map[string]string{"INKWELL_OIDC_PROVIDERS": "corp", "INKWELL_OIDC_CORP_ISSUER": "https://idp.example"}, "INKWELL_OIDC_CORP_CLIENT_ID"},
		{map[string]string{"INKWELL_OIDC_PROVIDERS": "github"}, "INKWELL_OIDC_GITHUB_CLIENT_ID"},
		{map[string]string{"INKWELL_OIDC_PROVIDERS": "corp", "INKWELL_OIDC_CORP_CLIENT_ID": "x", "INKWELL_OIDC_CORP_ISSUER": "idp.example"}, "must be an http(s) URL"},
		{map[string]string{"INKWELL_OIDC_PROVIDERS": "Corp!"}, "provider name"},
		{map[string]string{"INKWELL_OIDC_PROVIDERS": "a,a", "INKWELL_OIDC_A_ISSUER": "https://idp.example", "INKWELL_OIDC_A_CLIENT_ID": "x"}, "listed twice"},
		{map[string]string{"INKWELL_OIDC_REDIRECT_ALLOW": "https://app.example.com/path"}, "want an origin"},
		{map[string]string{"INKWELL_PUBLIC_URL": "api.example.com"}, "want an absolute http or https URL"},
	} {
		t.Run(c.want, func(t *testing.T) {
			err := parse(t, c.env).Validate(discard)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("%v: error %v, want one line with %q", c.env, err, c.want)
			}
		})
	}
}
