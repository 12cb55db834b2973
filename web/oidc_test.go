package web_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

type signInBundle struct {
	bundle
	svc *mocks.MockSignInService
}

func setupSignIn(t *testing.T, secure bool) signInBundle {
	t.Helper()
	b := setup(t)
	svc := mocks.NewMockSignInService(b.ctrl)
	logger := slog.New(slog.DiscardHandler)
	b.router = web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
		Auth:   web.NewAuthenticator(b.users, logger),
		SignIn: web.NewSignInHandler(svc, web.SignInCookieConfig{Secure: secure}, logger),
	})
	return signInBundle{b, svc}
}

func TestSignIn_StartRedirectsWithTheCookie(t *testing.T) {
	for _, secure := range []bool{false, true} {
		b := setupSignIn(t, secure)
		b.svc.EXPECT().Start(gomock.Any(), "corp", "https://app.example.com/cb", int64(0)).
			Return(service.SignInStart{AuthorizationURL: "https://idp.example/auth?state=s", Cookie: "browser-secret"}, nil)
		rec := b.do(newRequest("GET", "/api/auth/oidc/corp/start?redirect=https%3A%2F%2Fapp.example.com%2Fcb", "", nil))
		requireStatus(t, rec, http.StatusFound)
		if rec.Header().Get("Location") != "https://idp.example/auth?state=s" {
			t.Fatalf("Location %q", rec.Header().Get("Location"))
		}
		c := rec.Result().Cookies()
		if len(c) != 1 || c[0].Name != "inkwell_sign_in" || c[0].Value != "browser-secret" || !c[0].HttpOnly || c[0].Secure != secure ||
			c[0].SameSite != http.SameSiteLaxMode || c[0].Path != "/api/auth/oidc/corp/callback" || c[0].MaxAge != 600 {
			t.Fatalf("cookie %+v (secure %v)", c, secure)
		}
	}
}

func TestSignIn_Errors(t *testing.T) {
	for _, c := range []struct {
		name, method, target, body string
		headers                    map[string]string
		stub                       func(b signInBundle)
		status                     int
		field                      string
	}{
		{"link through GET", "GET", "/api/auth/oidc/corp/start?redirect=x&link=true", "", nil, func(b signInBundle) {
			b.svc.EXPECT().Start(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		}, http.StatusUnprocessableEntity, "link"},
		{"unknown provider", "GET", "/api/auth/oidc/nope/start?redirect=x", "", nil, func(b signInBundle) {
			b.svc.EXPECT().Start(gomock.Any(), "nope", "x", int64(0)).Return(service.SignInStart{}, domain.ErrUnknownProvider)
		}, http.StatusNotFound, "provider"},
		{"unavailable provider", "GET", "/api/auth/oidc/corp/start?redirect=x", "", nil, func(b signInBundle) {
			b.svc.EXPECT().Start(gomock.Any(), "corp", "x", int64(0)).Return(service.SignInStart{}, domain.ErrProviderUnavailable)
		}, http.StatusServiceUnavailable, "provider"},
		{"redirect not allowed", "GET", "/api/auth/oidc/corp/start?redirect=x", "", nil, func(b signInBundle) {
			b.svc.EXPECT().Start(gomock.Any(), "corp", "x", int64(0)).Return(service.SignInStart{}, domain.NewValidationError("redirect", "no"))
		}, http.StatusUnprocessableEntity, "redirect"},
		{"bad state", "GET", "/api/auth/oidc/corp/callback?state=s&code=c", "", map[string]string{"Cookie": "inkwell_sign_in=k"}, func(b signInBundle) {
			b.svc.EXPECT().Callback(gomock.Any(), "corp", "s", "k", "c", "").Return("", domain.ErrBadSignInState)
		}, http.StatusBadRequest, "state"},
		{"spent code", "POST", "/api/auth/oidc/exchange", `{"code":"spent"}`, nil, func(b signInBundle) {
			b.svc.EXPECT().Exchange(gomock.Any(), "spent").Return(service.Session{}, domain.ErrAccountCodeInvalid)
		}, http.StatusUnprocessableEntity, "code"},
		{"malformed exchange body", "POST", "/api/auth/oidc/exchange", `{"code":7}`, nil, func(b signInBundle) {
			b.svc.EXPECT().Exchange(gomock.Any(), gomock.Any()).Times(0)
		}, http.StatusUnprocessableEntity, ""},
		{"link needs a session", "POST", "/api/auth/oidc/corp/start", `{"redirect":"x","password":"p"}`, nil, func(b signInBundle) {
			b.svc.EXPECT().StartLink(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		}, http.StatusUnauthorized, "token"},
		{"unlink a malformed id", "DELETE", "/api/user/identities/abc", "", authHeader, func(b signInBundle) {
			expectAuth(b.users)
			b.svc.EXPECT().Unlink(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		}, http.StatusNotFound, "body"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := setupSignIn(t, false)
			c.stub(b)
			rec := b.do(newRequest(c.method, c.target, c.body, c.headers))
			requireStatus(t, rec, c.status)
			if c.field != "" && !strings.Contains(rec.Body.String(), `"`+c.field+`"`) {
				t.Fatalf("body %s, want an error of %q", rec.Body, c.field)
			}
		})
	}
}

func TestSignIn_CallbackRedirectsAndSpendsTheCookie(t *testing.T) {
	b := setupSignIn(t, true)
	b.svc.EXPECT().Callback(gomock.Any(), "corp", "s", "k", "c", "").Return("https://app.example.com/cb?code=one", nil)
	rec := b.do(newRequest("GET", "/api/auth/oidc/corp/callback?state=s&code=c", "", map[string]string{"Cookie": "inkwell_sign_in=k"}))
	requireStatus(t, rec, http.StatusFound)
	if rec.Header().Get("Location") != "https://app.example.com/cb?code=one" || rec.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("headers %v", rec.Header())
	}
	if c := rec.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Fatalf("the cookie is not cleared: %+v", c)
	}
}

func TestSignIn_ExchangeAnswersAsLogin(t *testing.T) {
	b := setupSignIn(t, false)
	b.svc.EXPECT().Exchange(gomock.Any(), "one").Return(service.Session{User: domain.User{ID: 7, Username: "jake", Email: "jake@jake.jake"}, Token: "T", Refresh: "R"}, nil)
	rec := b.do(newRequest("POST", "/api/auth/oidc/exchange", `{"code":"one"}`, nil))
	requireStatus(t, rec, http.StatusOK)
	for _, want := range []string{`"token":"T"`, `"refreshToken":"R"`, `"username":"jake"`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("body %s lacks %s", rec.Body, want)
		}
	}
}

func TestSignIn_StartLinkPassesTheStepUp(t *testing.T) {
	b := setupSignIn(t, false)
	expectAuth(b.users)
	b.svc.EXPECT().StartLink(gomock.Any(), sessionCred, "corp", "https://app.example.com/cb", "pw", "").
		Return(service.SignInStart{AuthorizationURL: "https://idp.example/auth", Cookie: "k"}, nil)
	rec := b.do(newRequest("POST", "/api/auth/oidc/corp/start", `{"redirect":"https://app.example.com/cb","link":true,"password":"pw"}`, authHeader))
	requireStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"authorizationUrl":"https://idp.example/auth"`) || len(rec.Result().Cookies()) != 1 {
		t.Fatalf("body %s cookies %v", rec.Body, rec.Result().Cookies())
	}
}
