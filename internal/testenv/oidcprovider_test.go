package testenv_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// signIn runs a whole authorization-code flow with PKCE against the provider, as a relying party
// would, and returns the token response.
func signIn(t *testing.T, ctx context.Context, op *testenv.OIDCProvider, conf *oauth2.Config, nonce string) *oauth2.Token {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	authorize := conf.AuthCodeURL("state-1", oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier))
	callback, err := url.Parse(op.SignIn(t, http.DefaultClient, authorize, "ada", "lovelace"))
	if err != nil {
		t.Fatal(err)
	}
	if got := callback.Query().Get("state"); got != "state-1" {
		t.Fatalf("state = %q, want state-1 (callback %s)", got, callback)
	}
	tok, err := conf.Exchange(ctx, callback.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return tok
}

func kidOf(t *testing.T, rawIDToken string) string {
	t.Helper()
	header, _, _ := strings.Cut(rawIDToken, ".")
	decoded, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(decoded, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

func TestOIDCProviderCodeFlowWithPKCEAndRotation(t *testing.T) {
	t.Parallel()
	op := testenv.StartOIDCProvider(t)
	op.AddUser(t, testenv.OIDCUser{
		Username: "ada", Password: "lovelace", Subject: "sub-ada", Email: "ada@example.com",
		EmailVerified: true, Name: "Ada Lovelace", PreferredUsername: "ada",
	})
	op.AddClient(t, "inkwell", "s3cret", "http://127.0.0.1:*/oauth/callback")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	provider, err := oidc.NewProvider(ctx, op.Issuer())
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	conf := &oauth2.Config{
		ClientID: "inkwell", ClientSecret: "s3cret", Endpoint: provider.Endpoint(),
		RedirectURL: "http://127.0.0.1:4321/oauth/callback", Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
	}
	verifier := provider.Verifier(&oidc.Config{ClientID: "inkwell"})

	tok := signIn(t, ctx, op, conf, "nonce-1")
	raw, _ := tok.Extra("id_token").(string)
	idToken, err := verifier.Verify(ctx, raw)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	var claims struct {
		Email             string `json:"email"`
		EmailVerified     bool   `json:"email_verified"`
		Name              string `json:"name"`
		PreferredUsername string `json:"preferred_username"`
		AZP               string `json:"azp"`
	}
	if err := idToken.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if idToken.Subject != "sub-ada" || idToken.Nonce != "nonce-1" || claims.Email != "ada@example.com" ||
		!claims.EmailVerified || claims.Name != "Ada Lovelace" || claims.PreferredUsername != "ada" || claims.AZP != "inkwell" {
		t.Fatalf("claims: sub=%q nonce=%q %+v", idToken.Subject, idToken.Nonce, claims)
	}
	info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil || info.Subject != "sub-ada" || info.Email != "ada@example.com" {
		t.Fatalf("userinfo: %+v, %v", info, err)
	}

	before := kidOf(t, raw)
	op.RotateKeys(t)
	raw2, _ := signIn(t, ctx, op, conf, "nonce-2").Extra("id_token").(string)
	if after := kidOf(t, raw2); after == before || after == "" {
		t.Fatalf("kid after rotation = %q, before %q", after, before)
	}
	// The same verifier follows the rotation: go-oidc refetches the JWKS on an unknown kid.
	if _, err := verifier.Verify(ctx, raw2); err != nil {
		t.Fatalf("verify after rotation: %v", err)
	}
}

func TestOIDCProviderRequiresPKCEAndTweaksTheNextToken(t *testing.T) {
	t.Parallel()
	op := testenv.StartOIDCProvider(t)
	op.AddUser(t, testenv.OIDCUser{Username: "ada", Password: "lovelace", Subject: "sub-ada"})
	op.AddClient(t, "inkwell", "s3cret", "http://127.0.0.1:4321/cb")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	provider, err := oidc.NewProvider(ctx, op.Issuer())
	if err != nil {
		t.Fatal(err)
	}
	conf := &oauth2.Config{ClientID: "inkwell", ClientSecret: "s3cret", Endpoint: provider.Endpoint(),
		RedirectURL: "http://127.0.0.1:4321/cb", Scopes: []string{oidc.ScopeOpenID}}

	// Without PKCE the provider sends the browser back with an error, not a code.
	noPKCE, err := url.Parse(op.SignIn(t, http.DefaultClient, conf.AuthCodeURL("s"), "ada", "lovelace"))
	if err != nil {
		t.Fatal(err)
	}
	if noPKCE.Query().Get("error") != "invalid_request" || noPKCE.Query().Get("code") != "" {
		t.Fatalf("without PKCE: %s", noPKCE)
	}

	verifier := provider.Verifier(&oidc.Config{ClientID: "inkwell"})
	op.NextToken(t, "inkwell", testenv.TokenTweak{Expired: true})
	raw, _ := signIn(t, ctx, op, conf, "n").Extra("id_token").(string)
	var expired *oidc.TokenExpiredError
	if _, err := verifier.Verify(ctx, raw); !errors.As(err, &expired) {
		t.Fatalf("expired tweak: %v", err)
	}
	op.NextToken(t, "inkwell", testenv.TokenTweak{Audience: "someone-else", Nonce: "other"})
	raw, _ = signIn(t, ctx, op, conf, "n").Extra("id_token").(string)
	if _, err := verifier.Verify(ctx, raw); err == nil {
		t.Fatal("a token for another audience verified")
	}
	tok, err := provider.Verifier(&oidc.Config{ClientID: "someone-else"}).Verify(ctx, raw)
	if err != nil || tok.Nonce != "other" {
		t.Fatalf("tweaked token: %+v, %v", tok, err)
	}
	// The tweak was for one token only.
	raw, _ = signIn(t, ctx, op, conf, "n").Extra("id_token").(string)
	if tok, err := verifier.Verify(ctx, raw); err != nil || tok.Nonce != "n" {
		t.Fatalf("after the tweak: %+v, %v", tok, err)
	}
}
