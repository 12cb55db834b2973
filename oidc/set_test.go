package oidc_test

import (
	"context"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/oidc"
)

func TestNewBuildsTheProvidersInOrder(t *testing.T) {
	t.Parallel()
	op := testenv.StartOIDCProvider(t)
	set, cleanup, err := oidc.New(context.Background(), oidc.Config{Providers: []oidc.ProviderConfig{
		{Name: "corp", DisplayName: "Corp", Issuer: op.Issuer(), ClientID: "inkwell"},
		{Name: "github", DisplayName: "GitHub", ClientID: "gh"},
	}}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	list := set.List()
	if len(list) != 2 || list[0].Name() != "corp" || list[1].Name() != "github" || !list[0].Available() || !list[1].Available() {
		t.Fatalf("providers %v", list)
	}
	if p, ok := set.Get("github"); !ok || p.DisplayName() != "GitHub" {
		t.Fatalf("Get(github) = %v, %v", p, ok)
	}
	if _, ok := set.Get("nope"); ok {
		t.Fatal("Get(nope) found a provider")
	}
}

func TestNewRefusesABadConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]oidc.Config{
		"no name":      {Providers: []oidc.ProviderConfig{{Issuer: "http://127.0.0.1:1", ClientID: "c"}}},
		"no client id": {Providers: []oidc.ProviderConfig{{Name: "corp", Issuer: "http://127.0.0.1:1"}}},
		"no issuer":    {Providers: []oidc.ProviderConfig{{Name: "corp", ClientID: "c"}}},
		"twice":        {Providers: []oidc.ProviderConfig{{Name: "github", ClientID: "c"}, {Name: "github", ClientID: "c"}}},
	} {
		if _, _, err := oidc.New(context.Background(), cfg, testenv.Logger(t)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
