package oidc_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/oidc"
)

const redirectURI = "http://127.0.0.1:8080/api/auth/oidc/corp/callback"

var ada = testenv.OIDCUser{
	Username: "ada", Password: "lovelace", Subject: "sub-ada", Email: "ada@example.com",
	EmailVerified: true, Name: "Ada Lovelace", PreferredUsername: "ada",
}

// corp starts a provider with ada and the client "inkwell", and the adapter for it.
func corp(t *testing.T) (*testenv.OIDCProvider, *oidc.OIDCProvider) {
	t.Helper()
	op := testenv.StartOIDCProvider(t)
	op.AddUser(t, ada)
	op.AddClient(t, "inkwell", "s3cret", "http://127.0.0.1:*/api/auth/oidc/corp/callback")
	p, stop := oidc.NewOIDCProvider(context.Background(), oidc.ProviderConfig{
		Name: "corp", DisplayName: "Corp SSO", Issuer: op.Issuer(), ClientID: "inkwell", ClientSecret: "s3cret",
	}, oidc.Options{Log: testenv.Logger(t)})
	t.Cleanup(stop)
	if !p.Available() {
		t.Fatal("the provider is not available after discovery")
	}
	return op, p
}

// signIn runs the browser part and returns the code and the PKCE verifier.
func signIn(t *testing.T, op *testenv.OIDCProvider, p *oidc.OIDCProvider, user testenv.OIDCUser, nonce string) (code, verifier string) {
	t.Helper()
	verifier = oauth2.GenerateVerifier()
	authorize, err := p.AuthCodeURL("state-1", nonce, verifier, redirectURI)
	if err != nil {
		t.Fatal(err)
	}
	callback, err := url.Parse(op.SignIn(t, http.DefaultClient, authorize, user.Username, user.Password))
	if err != nil {
		t.Fatal(err)
	}
	if callback.Query().Get("state") != "state-1" || callback.Query().Get("code") == "" {
		t.Fatalf("callback %s", callback)
	}
	return callback.Query().Get("code"), verifier
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantFailure(t *testing.T, err error, code string) {
	t.Helper()
	var f *domain.SignInFailure
	if !errors.As(err, &f) || f.Code != code {
		t.Fatalf("err = %v, want SignInFailure %s", err, code)
	}
}

func TestOIDCSignInAndKeyRotation(t *testing.T) {
	t.Parallel()
	op, p := corp(t)
	if p.Name() != "corp" || p.DisplayName() != "Corp SSO" {
		t.Fatalf("name %q display %q", p.Name(), p.DisplayName())
	}
	code, verifier := signIn(t, op, p, ada, "nonce-1")
	got, err := p.Exchange(ctx(t), code, verifier, redirectURI, "nonce-1")
	if err != nil {
		t.Fatal(err)
	}
	want := domain.ExternalIdentity{Provider: "corp", Subject: "sub-ada", Email: "ada@example.com", EmailVerified: true, Name: "Ada Lovelace", Username: "ada"}
	if got != want {
		t.Fatalf("identity = %+v, want %+v", got, want)
	}
	// The same code again is refused by the provider.
	_, err = p.Exchange(ctx(t), code, verifier, redirectURI, "nonce-1")
	wantFailure(t, err, domain.SignInExchangeFailed)

	op.RotateKeys(t)
	code, verifier = signIn(t, op, p, ada, "nonce-2")
	if got, err := p.Exchange(ctx(t), code, verifier, redirectURI, "nonce-2"); err != nil || got.Subject != "sub-ada" {
		t.Fatalf("after key rotation: %+v, %v", got, err)
	}
}

func TestOIDCRefusesTokensNotForThisSignIn(t *testing.T) {
	t.Parallel()
	op, p := corp(t)
	cases := []struct {
		name  string
		tweak testenv.TokenTweak
		want  string
	}{
		{"for another client", testenv.TokenTweak{Audience: "someone-else"}, domain.SignInInvalidToken},
		{"expired", testenv.TokenTweak{Expired: true}, domain.SignInInvalidToken},
		{"another nonce", testenv.TokenTweak{Nonce: "not-mine"}, domain.SignInNonceMismatch},
		{"authorized to another party", testenv.TokenTweak{AuthorizedParty: "someone-else"}, domain.SignInInvalidToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op.NextToken(t, "inkwell", c.tweak)
			code, verifier := signIn(t, op, p, ada, "nonce-1")
			_, err := p.Exchange(ctx(t), code, verifier, redirectURI, "nonce-1")
			wantFailure(t, err, c.want)
		})
	}
	t.Run("wrong PKCE verifier", func(t *testing.T) {
		code, _ := signIn(t, op, p, ada, "nonce-1")
		_, err := p.Exchange(ctx(t), code, oauth2.GenerateVerifier(), redirectURI, "nonce-1")
		wantFailure(t, err, domain.SignInExchangeFailed)
	})
}

func TestOIDCCarriesAnUnverifiedEmail(t *testing.T) {
	t.Parallel()
	op, p := corp(t)
	bob := testenv.OIDCUser{Username: "bob", Password: "pw", Subject: "sub-bob", Email: "bob@example.com", EmailVerified: false}
	op.AddUser(t, bob)
	code, verifier := signIn(t, op, p, bob, "n")
	got, err := p.Exchange(ctx(t), code, verifier, redirectURI, "n")
	if err != nil {
		t.Fatal(err)
	}
	if got.Email != "bob@example.com" || got.EmailVerified {
		t.Fatalf("identity = %+v, want bob@example.com unverified", got)
	}
}

func TestOIDCUnreachableIssuerBecomesAvailable(t *testing.T) {
	t.Parallel()
	// Reserve an address for the provider that is not up yet.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()

	asked := make(chan time.Duration, 8) // room enough that a failing test never blocks the retrier
	fire := make(chan time.Time)
	after := func(d time.Duration) <-chan time.Time { asked <- d; return fire }
	p, stop := oidc.NewOIDCProvider(context.Background(), oidc.ProviderConfig{
		Name: "corp", Issuer: "http://" + addr, ClientID: "inkwell", ClientSecret: "s3cret",
	}, oidc.Options{After: after, MinBackoff: time.Second, MaxBackoff: 3 * time.Second, Log: testenv.Logger(t)})
	t.Cleanup(stop)

	if p.Available() {
		t.Fatal("available without discovery")
	}
	if _, err := p.AuthCodeURL("s", "n", oauth2.GenerateVerifier(), redirectURI); !errors.Is(err, domain.ErrProviderUnavailable) {
		t.Fatalf("AuthCodeURL while unavailable: %v", err)
	}
	_, err = p.Exchange(ctx(t), "code", "v", redirectURI, "n")
	wantFailure(t, err, domain.SignInProviderUnavailable)

	// The backoff doubles, capped.
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		if got := testenv.Recv(t, asked, "a retry"); got != want {
			t.Fatalf("retry after %s, want %s", got, want)
		}
		fire <- time.Now()
	}
	testenv.Recv(t, asked, "a retry")

	op := testenv.StartOIDCProviderOn(t, addr)
	op.AddUser(t, ada)
	op.AddClient(t, "inkwell", "s3cret", redirectURI)
	fire <- time.Now()
	testenv.WaitUntil(t, "the provider is available", p.Available)

	code, verifier := signIn(t, op, p, ada, "n")
	if got, err := p.Exchange(ctx(t), code, verifier, redirectURI, "n"); err != nil || got.Subject != "sub-ada" {
		t.Fatalf("after recovery: %+v, %v", got, err)
	}
}
