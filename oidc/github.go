package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/oauth2"

	"github.com/inkwell-dev/inkwell/domain"
)

// GitHubEndpoints are where GitHub's OAuth 2 and API answer; tests point them at a stand-in.
type GitHubEndpoints struct {
	AuthURL  string // default https://github.com/login/oauth/authorize
	TokenURL string // default https://github.com/login/oauth/access_token
	APIBase  string // default https://api.github.com
}

func (e GitHubEndpoints) withDefaults() GitHubEndpoints {
	if e.AuthURL == "" {
		e.AuthURL = "https://github.com/login/oauth/authorize"
	}
	if e.TokenURL == "" {
		e.TokenURL = "https://github.com/login/oauth/access_token"
	}
	if e.APIBase == "" {
		e.APIBase = "https://api.github.com"
	}
	e.APIBase = strings.TrimSuffix(e.APIBase, "/")
	return e
}

// GitHub signs in through GitHub's OAuth 2 (not OIDC: no ID token, so no nonce) and reads who
// signed in from its REST API: GET /user and GET /user/emails.
type GitHub struct {
	cfg    ProviderConfig
	api    string
	oauth  oauth2.Config
	client *http.Client
}

// NewGitHub builds the GitHub provider; it needs no discovery, so it is always available.
func NewGitHub(cfg ProviderConfig, endpoints GitHubEndpoints, opts Options) *GitHub {
	endpoints = endpoints.withDefaults()
	opts = opts.withDefaults()
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{"read:user", "user:email"}
	}
	return &GitHub{
		cfg: cfg, api: endpoints.APIBase, client: opts.HTTPClient,
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Scopes: cfg.Scopes,
			Endpoint: oauth2.Endpoint{AuthURL: endpoints.AuthURL, TokenURL: endpoints.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
		},
	}
}

func (g *GitHub) Name() string        { return g.cfg.Name }
func (g *GitHub) DisplayName() string { return g.cfg.DisplayName }
func (g *GitHub) Available() bool     { return true }

// AuthCodeURL ignores nonce: GitHub issues no ID token. The caller checks state.
func (g *GitHub) AuthCodeURL(state, _, verifier, redirectURI string) (string, error) {
	conf := g.oauth
	conf.RedirectURL = redirectURI
	return conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), nil
}

func (g *GitHub) Exchange(ctx context.Context, code, verifier, redirectURI, _ string) (domain.ExternalIdentity, error) {
	conf := g.oauth
	conf.RedirectURL = redirectURI
	ctx = context.WithValue(ctx, oauth2.HTTPClient, g.client)
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return domain.ExternalIdentity{}, exchangeFailure(err)
	}
	var user struct {
		ID        int64  `json:"id"`
		Login     string `json:"login"`
		Name      string `json:"name"`
		AvatarURL string `json:"avatar_url"`
	}
	if err := g.get(ctx, tok, "/user", &user); err != nil {
		return domain.ExternalIdentity{}, err
	}
	if user.ID == 0 {
		return domain.ExternalIdentity{}, fail(domain.SignInInvalidToken, errors.New("GitHub /user without an id"))
	}
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	if err := g.get(ctx, tok, "/user/emails", &emails); err != nil {
		return domain.ExternalIdentity{}, err
	}
	identity := domain.ExternalIdentity{
		Provider: g.cfg.Name, Subject: strconv.FormatInt(user.ID, 10), Name: user.Name,
		Username: user.Login, Picture: httpsOnly(user.AvatarURL),
	}
	for _, e := range emails {
		if e.Primary && e.Verified {
			identity.Email, identity.EmailVerified = e.Email, true
		}
	}
	return identity, nil
}

func (g *GitHub) get(ctx context.Context, tok *oauth2.Token, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.api+path, nil)
	if err != nil {
		return fail(domain.SignInProviderUnavailable, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	tok.SetAuthHeader(req)
	resp, err := g.client.Do(req)
	if err != nil {
		return fail(domain.SignInProviderUnavailable, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500:
		return fail(domain.SignInProviderUnavailable, fmt.Errorf("GitHub %s: %s", path, resp.Status))
	case resp.StatusCode != http.StatusOK:
		return fail(domain.SignInExchangeFailed, fmt.Errorf("GitHub %s: %s", path, resp.Status))
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(into); err != nil {
		return fail(domain.SignInProviderUnavailable, fmt.Errorf("GitHub %s: %w", path, err))
	}
	return nil
}
