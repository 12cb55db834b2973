package oidc_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/oidc"
)

// fakeGitHub answers in the shapes GitHub documents for its OAuth token endpoint and the REST
// API's /user and /user/emails. A stand-in is the only way here: GitHub cannot run locally.
func fakeGitHub(t *testing.T, emails string) (*httptest.Server, *string) {
	t.Helper()
	var challenge string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		w.Header().Set("Content-Type", "application/json")
		// GitHub answers a bad code with 200 and an error field.
		if r.PostForm.Get("code") != "good-code" || r.PostForm.Get("client_id") != "gh-client" ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			_, _ = w.Write([]byte(`{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired."}`))
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"gho_token","token_type":"bearer","scope":"read:user,user:email"}`))
	})
	authorized := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer gho_token" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /user", authorized(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"login":"octocat","id":583231,"avatar_url":"https://avatars.githubusercontent.com/u/583231?v=4","name":"The Octocat","email":null}`))
	}))
	mux.HandleFunc("GET /user/emails", authorized(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(emails))
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &challenge
}

func github(srv *httptest.Server) *oidc.GitHub {
	return oidc.NewGitHub(oidc.ProviderConfig{Name: "github", DisplayName: "GitHub", ClientID: "gh-client", ClientSecret: "gh-secret"},
		oidc.GitHubEndpoints{AuthURL: srv.URL + "/login/oauth/authorize", TokenURL: srv.URL + "/login/oauth/access_token", APIBase: srv.URL},
		oidc.Options{HTTPClient: srv.Client()})
}

func TestGitHubSignIn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		emails string
		email  string
	}{
		{"primary verified", `[{"email":"old@example.com","primary":false,"verified":true},{"email":"octo@example.com","primary":true,"verified":true,"visibility":"public"}]`, "octo@example.com"},
		{"primary unverified", `[{"email":"octo@example.com","primary":true,"verified":false}]`, ""},
		{"none", `[]`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, challenge := fakeGitHub(t, c.emails)
			gh := github(srv)
			verifier := oauth2.GenerateVerifier()
			authorize, err := gh.AuthCodeURL("state-1", "ignored", verifier, "http://127.0.0.1:8080/cb")
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(authorize)
			q := u.Query()
			if q.Get("state") != "state-1" || q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "gh-client" ||
				q.Get("scope") != "read:user user:email" || q.Get("redirect_uri") != "http://127.0.0.1:8080/cb" {
				t.Fatalf("authorize URL %s", authorize)
			}
			*challenge = q.Get("code_challenge")
			got, err := gh.Exchange(ctx(t), "good-code", verifier, "http://127.0.0.1:8080/cb", "")
			if err != nil {
				t.Fatal(err)
			}
			want := domain.ExternalIdentity{Provider: "github", Subject: "583231", Email: c.email, EmailVerified: c.email != "",
				Name: "The Octocat", Username: "octocat", Picture: "https://avatars.githubusercontent.com/u/583231?v=4"}
			if got != want {
				t.Fatalf("identity = %+v, want %+v", got, want)
			}
		})
	}
}

func TestGitHubRefusedCode(t *testing.T) {
	t.Parallel()
	srv, _ := fakeGitHub(t, `[]`)
	_, err := github(srv).Exchange(ctx(t), "replayed", oauth2.GenerateVerifier(), "http://127.0.0.1:8080/cb", "")
	wantFailure(t, err, domain.SignInExchangeFailed)
}

func TestGitHubDown(t *testing.T) {
	t.Parallel()
	srv, _ := fakeGitHub(t, `[]`)
	gh := github(srv)
	srv.Close()
	_, err := gh.Exchange(ctx(t), "good-code", oauth2.GenerateVerifier(), "http://127.0.0.1:8080/cb", "")
	wantFailure(t, err, domain.SignInProviderUnavailable)
}
