package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// sessionBundle is a router with the session handler, and the article handler to try scopes on.
type sessionBundle struct {
	users    *mocks.MockUserService
	sessions *mocks.MockSessionService
	articles *mocks.MockArticleService
	router   http.Handler
}

func setupSessions(t *testing.T) sessionBundle {
	t.Helper()
	ctrl := gomock.NewController(t)
	b := sessionBundle{
		users:    mocks.NewMockUserService(ctrl),
		sessions: mocks.NewMockSessionService(ctrl),
		articles: mocks.NewMockArticleService(ctrl),
	}
	logger := slog.New(slog.DiscardHandler)
	b.router = web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
		Auth:     web.NewAuthenticator(b.users, logger),
		Users:    web.NewUserHandler(b.users, logger),
		Sessions: web.NewSessionHandler(b.sessions, b.users, logger),
		Articles: web.NewArticleHandler(b.articles, nil, logger),
	})
	return b
}

type sessionCase struct {
	name          string
	method, path  string
	body          string
	headers       map[string]string
	buildStubs    func(b sessionBundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runSessionCases(t *testing.T, tests []sessionCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupSessions(t)
			tc.buildStubs(b)
			rec := httptest.NewRecorder()
			b.router.ServeHTTP(rec, newRequest(tc.method, tc.path, tc.body, tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

var keyHeader = map[string]string{"Authorization": "Bearer " + apiKeyToken}

func TestSessionEndpoints(t *testing.T) {
	t.Parallel()
	used := time.Date(2026, 5, 2, 9, 30, 0, 0, time.UTC)
	created := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	runSessionCases(t, []sessionCase{
		{
			name: "list", method: "GET", path: "/api/user/sessions", headers: authHeader,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().ListSessions(gomock.Any(), sessionCred).Return([]domain.SessionInfo{
					{ID: "sid", UserAgent: "curl/8", CreatedAt: created, LastUsedAt: &used, Current: true},
					{ID: "other", CreatedAt: created},
				}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"sessions":[
					{"id":"sid","userAgent":"curl/8","createdAt":"2026-05-01T08:00:00.000Z","lastUsedAt":"2026-05-02T09:30:00.000Z","current":true},
					{"id":"other","userAgent":"","createdAt":"2026-05-01T08:00:00.000Z","lastUsedAt":null,"current":false}]}`)
			},
		},
		{
			name: "end a session", method: "DELETE", path: "/api/user/sessions/other", headers: authHeader,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().RevokeSession(gomock.Any(), authedID, "other").Return(nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNoContent) },
		},
		{
			name: "another user's session is 404", method: "DELETE", path: "/api/user/sessions/theirs", headers: authHeader,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().RevokeSession(gomock.Any(), authedID, "theirs").Return(domain.ErrNotFound)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusNotFound, map[string][]string{"body": {"not found"}})
			},
		},
		{
			name: "logout without a body ends this session", method: "POST", path: "/api/users/logout", headers: authHeader,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().Logout(gomock.Any(), "TOKEN", false).Return(nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNoContent) },
		},
		{
			name: "logout all", method: "POST", path: "/api/users/logout", headers: authHeader, body: `{"all":true}`,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().Logout(gomock.Any(), "TOKEN", true).Return(nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNoContent) },
		},
		{
			name: "logout with a malformed body ends nothing", method: "POST", path: "/api/users/logout", headers: authHeader, body: `{"all":"yes"}`,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().Logout(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnprocessableEntity)
			},
		},
		{
			name: "key scopes are passed on", method: "POST", path: "/api/user/api-keys", headers: authHeader,
			body: `{"apiKey":{"name":"ci","scopes":["read"]}}`,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().CreateAPIKey(gomock.Any(), authedID, "ci", []string{"read"}).
					Return(domain.APIKey{ID: 4, Name: "ci", Prefix: "iw_abcdef", Scopes: []domain.Scope{domain.ScopeRead}, CreatedAt: created}, "iw_abcdef-secret", nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated, `{"apiKey":{"id":4,"name":"ci","prefix":"iw_abcdef","key":"iw_abcdef-secret","scopes":["read"],"createdAt":"2026-05-01T08:00:00.000Z","lastUsedAt":null}}`)
			},
		},
		{
			name: "an empty scope list reaches the service as given, not as absent", method: "POST", path: "/api/user/api-keys", headers: authHeader,
			body: `{"apiKey":{"name":"ci","scopes":[]}}`,
			buildStubs: func(b sessionBundle) {
				expectAuth(b.users)
				b.sessions.EXPECT().CreateAPIKey(gomock.Any(), authedID, "ci", []string{}).
					Return(domain.APIKey{}, "", domain.NewValidationError("scopes", "must name at least one scope"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"scopes": {"must name at least one scope"}})
			},
		},
	})
}

// Account management is for login sessions: every API key, whatever its scopes, is refused
// before the handler, and nothing reaches the session service.
func TestAPIKeysCannotManageTheAccount(t *testing.T) {
	t.Parallel()
	routes := []struct{ method, path, body string }{
		{"PUT", "/api/user", `{"user":{"email":"evil@example.com","password":"taken-over"}}`},
		{"POST", "/api/user/api-keys", `{"apiKey":{"name":"more"}}`},
		{"GET", "/api/user/api-keys", ""},
		{"DELETE", "/api/user/api-keys/1", ""},
		{"GET", "/api/user/sessions", ""},
		{"DELETE", "/api/user/sessions/sid", ""},
		{"POST", "/api/users/logout", `{"all":true}`},
		{"POST", "/api/users/logout", ""},
	}
	var cases []sessionCase
	for _, cred := range []domain.Credential{writeKeyCred, readKeyCred} {
		for _, r := range routes {
			cases = append(cases, sessionCase{
				name: r.method + " " + r.path + " " + string(cred.Scopes[0]) + " key " + r.body, method: r.method, path: r.path, body: r.body, headers: keyHeader,
				buildStubs: func(b sessionBundle) {
					b.users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(cred, nil)
					b.users.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
					b.sessions.EXPECT().Logout(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
					b.sessions.EXPECT().CreateAPIKey(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
					b.sessions.EXPECT().ListAPIKeys(gomock.Any(), gomock.Any()).Times(0)
					b.sessions.EXPECT().RevokeAPIKey(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
					b.sessions.EXPECT().ListSessions(gomock.Any(), gomock.Any()).Times(0)
					b.sessions.EXPECT().RevokeSession(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				},
				checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
					want := apiKeyRefusal
					if !cred.CanWrite() && r.method != "GET" {
						want = readKeyRefusal
					}
					requireErrors(t, rec, http.StatusForbidden, map[string][]string{"token": {want}})
				},
			})
		}
	}
	runSessionCases(t, cases)
}

const readKeyRefusal = "is an API key with the read scope: it may only send GET requests"

func TestAPIKeyScopes(t *testing.T) {
	t.Parallel()
	runSessionCases(t, []sessionCase{
		{
			name: "a read key may read", method: "GET", path: "/api/articles/feed", headers: keyHeader,
			buildStubs: func(b sessionBundle) {
				b.users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(readKeyCred, nil)
				b.articles.EXPECT().Feed(gomock.Any(), authedID, gomock.Any()).Return(service.ArticleList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{
			name: "a read key may not write", method: "POST", path: "/api/articles", headers: keyHeader,
			body: `{"article":{"title":"t","description":"d","body":"b"}}`,
			buildStubs: func(b sessionBundle) {
				b.users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(readKeyCred, nil)
				b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusForbidden, map[string][]string{"token": {readKeyRefusal}})
			},
		},
		{
			name: "a read key may not delete", method: "DELETE", path: "/api/articles/some-slug", headers: keyHeader,
			buildStubs: func(b sessionBundle) {
				b.users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(readKeyCred, nil)
				b.articles.EXPECT().Delete(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusForbidden, map[string][]string{"token": {readKeyRefusal}})
			},
		},
	})
}
