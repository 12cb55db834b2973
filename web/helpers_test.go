package web_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

const maxBodyBytes = 1 << 20

// bundle is one test's router with the service mocks behind it.
type bundle struct {
	ctrl     *gomock.Controller
	users    *mocks.MockUserService
	profiles *mocks.MockProfileService
	articles *mocks.MockArticleService
	comments *mocks.MockCommentService
	router   http.Handler
}

func setup(t *testing.T) bundle {
	t.Helper()
	return setupWith(t, web.RouterConfig{MaxBodyBytes: maxBodyBytes})
}

// setupWith is setup with the router's settings of the test's choosing.
func setupWith(t *testing.T, cfg web.RouterConfig) bundle {
	t.Helper()
	ctrl := gomock.NewController(t)
	users := mocks.NewMockUserService(ctrl)
	profiles := mocks.NewMockProfileService(ctrl)
	articles := mocks.NewMockArticleService(ctrl)
	comments := mocks.NewMockCommentService(ctrl)
	logger := slog.New(slog.DiscardHandler)
	router := web.NewRouter(cfg, logger, web.Handlers{
		Auth:     web.NewAuthenticator(users, logger),
		Users:    web.NewUserHandler(users, logger),
		Profiles: web.NewProfileHandler(profiles, logger),
		Articles: web.NewArticleHandler(articles, nil, logger),
		Comments: web.NewCommentHandler(comments, logger),
	})
	return bundle{ctrl: ctrl, users: users, profiles: profiles, articles: articles, comments: comments, router: router}
}

// do serves one request through the router and returns the recorded response.
func (b bundle) do(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, req)
	return rec
}

// newRequest builds a request; a non-empty body is sent as JSON.
func newRequest(method, target, body string, headers map[string]string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// authHeader is the Authorization header of a client holding token "TOKEN".
var authHeader = map[string]string{"Authorization": "Token TOKEN"}

const authedID int64 = 7 // the user id "TOKEN" authenticates as

// sessionCred is the credential of "TOKEN": a login session of authedID.
var sessionCred = domain.Credential{UserID: authedID, SessionID: "sid"}

// apiKeyToken is an API key's bearer credential; writeKeyCred and readKeyCred are what it
// authenticates as with the write and the read scope.
const apiKeyToken = "iw_test-key"

var (
	writeKeyCred = domain.Credential{UserID: authedID, APIKeyID: 3, Scopes: []domain.Scope{domain.ScopeWrite}}
	readKeyCred  = domain.Credential{UserID: authedID, APIKeyID: 4, Scopes: []domain.Scope{domain.ScopeRead}}
)

// apiKeyRefusal is the 403 message of account management tried with an API key.
const apiKeyRefusal = "is an API key; account management (email, password, API keys, sessions, logout) needs a login session"

// expectAuth makes users.Authenticate accept "TOKEN" as user authedID.
func expectAuth(users *mocks.MockUserService) {
	users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil)
}

func requireStatus(t *testing.T, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, want, rec.Body)
	}
}

// requireJSON fails unless the response has the given status and a JSON body equal to want
// (compared as decoded JSON, so key order does not matter).
func requireJSON(t *testing.T, rec *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	requireStatus(t, rec, status)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var got, exp any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("response body %q is not JSON: %v", rec.Body, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("bad expectation %q: %v", want, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("body = %s, want %s", rec.Body, want)
	}
}

// requireErrors fails unless the response is status with the RealWorld error body
// {"errors": fields}.
func requireErrors(t *testing.T, rec *httptest.ResponseRecorder, status int, fields map[string][]string) {
	t.Helper()
	want, err := json.Marshal(map[string]any{"errors": fields})
	if err != nil {
		t.Fatal(err)
	}
	requireJSON(t, rec, status, string(want))
}

// routeCase is one request to one route: the body and headers sent, the calls the services
// expect, and what the response must be.
type routeCase struct {
	name          string
	target        string // overrides the route's default target when set
	body          string
	headers       map[string]string
	buildStubs    func(users *mocks.MockUserService, profiles *mocks.MockProfileService)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

// runRouteCases serves each case as method target, each in its own parallel subtest with fresh mocks.
func runRouteCases(t *testing.T, method, target string, tests []routeCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tc.buildStubs(b.users, b.profiles)
			u := target
			if tc.target != "" {
				u = tc.target
			}
			tc.checkResponse(t, b.do(newRequest(method, u, tc.body, tc.headers)))
		})
	}
}
