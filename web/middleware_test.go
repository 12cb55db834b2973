package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	okStubs := func(token string) func(*mocks.MockUserService, *mocks.MockProfileService) {
		return func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
			users.EXPECT().Authenticate(gomock.Any(), token).Return(sessionCred, nil)
			users.EXPECT().Current(gomock.Any(), authedID).Return(jake, nil)
		}
	}
	refusedBeforeService := func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
		users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
		users.EXPECT().Current(gomock.Any(), gomock.Any()).Times(0)
	}
	requireMalformed := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is malformed; send Authorization: Token <jwt>"}})
	}
	requireOK := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		requireJSON(t, rec, http.StatusOK, jakeJSON)
	}

	runRouteCases(t, http.MethodGet, "/api/user", []routeCase{
		{
			name:          "Token scheme",
			headers:       map[string]string{"Authorization": "Token TOKEN"},
			buildStubs:    okStubs("TOKEN"),
			checkResponse: requireOK,
		},
		{
			name:          "Bearer scheme",
			headers:       map[string]string{"Authorization": "Bearer TOKEN"},
			buildStubs:    okStubs("TOKEN"),
			checkResponse: requireOK,
		},
		{
			name:          "scheme is case-insensitive and spaces are trimmed",
			headers:       map[string]string{"Authorization": " bearer   TOKEN "},
			buildStubs:    okStubs("TOKEN"),
			checkResponse: requireOK,
		},
		{
			name:          "missing header",
			buildStubs:    refusedBeforeService,
			checkResponse: requireMissingToken,
		},
		{
			name:          "Basic scheme",
			headers:       map[string]string{"Authorization": "Basic x"},
			buildStubs:    refusedBeforeService,
			checkResponse: requireMalformed,
		},
		{
			name:          "scheme without a token",
			headers:       map[string]string{"Authorization": "Token"},
			buildStubs:    refusedBeforeService,
			checkResponse: requireMalformed,
		},
		{
			name:          "scheme followed by blanks only",
			headers:       map[string]string{"Authorization": "Token    "},
			buildStubs:    refusedBeforeService,
			checkResponse: requireMalformed,
		},
		{
			name:          "bare token without a scheme",
			headers:       map[string]string{"Authorization": "eyJhbGciOiJIUzI1NiJ9.e30.sig"},
			buildStubs:    refusedBeforeService,
			checkResponse: requireMalformed,
		},
		{
			name:    "garbled token",
			headers: map[string]string{"Authorization": "Token garbled"},
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), "garbled").Return(domain.Credential{}, domain.ErrUnauthorized)
				users.EXPECT().Current(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing, invalid or expired"}})
			},
		},
		{
			name:    "database down while authenticating",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{}, domain.ErrUnavailable)
				users.EXPECT().Current(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusServiceUnavailable, map[string][]string{
					"body": {"the service is temporarily unavailable; retry shortly"},
				})
				if rec.Header().Get("Retry-After") == "" {
					t.Error("503 without a Retry-After header")
				}
			},
		},
		{
			name:    "unexpected error while authenticating",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockProfileService) {
				users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{}, errInternal)
				users.EXPECT().Current(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireInternalError,
		},
	})
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	const (
		prefix = `{"user":{"email":"jake@jake.jake","password":"`
		suffix = `"}}`
	)
	overLimit := prefix + strings.Repeat("p", maxBodyBytes) + suffix
	padded := prefix + "jakejake" + suffix + strings.Repeat(" ", maxBodyBytes)
	atLimit := prefix + strings.Repeat("p", maxBodyBytes-len(prefix)-len(suffix)) + suffix

	neverLogsIn := func(users *mocks.MockUserService) {
		users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	tests := []struct {
		name          string
		body          string
		chunked       bool // no Content-Length: the limit can only be found while reading
		buildStubs    func(users *mocks.MockUserService)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name:       "declared Content-Length over the limit",
			body:       overLimit,
			buildStubs: neverLogsIn,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusRequestEntityTooLarge, map[string][]string{"body": {"request body is too large"}})
			},
		},
		{
			name:       "chunked body over the limit",
			body:       overLimit,
			chunked:    true,
			buildStubs: neverLogsIn,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusRequestEntityTooLarge, map[string][]string{"body": {"request body is larger than 1048576 bytes"}})
			},
		},
		{
			name:       "chunked small object padded past the limit",
			body:       padded,
			chunked:    true,
			buildStubs: neverLogsIn,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusRequestEntityTooLarge, map[string][]string{"body": {"request body is larger than 1048576 bytes"}})
			},
		},
		{
			name: "body of exactly the limit is read",
			body: atLimit,
			buildStubs: func(users *mocks.MockUserService) {
				users.EXPECT().Login(gomock.Any(), "jake@jake.jake", strings.Repeat("p", maxBodyBytes-len(prefix)-len(suffix))).
					Return(service.Session{}, domain.ErrInvalidCredentials)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnauthorized)
			},
		},
		{
			name:    "chunked body of exactly the limit is read",
			body:    atLimit,
			chunked: true,
			buildStubs: func(users *mocks.MockUserService) {
				users.EXPECT().Login(gomock.Any(), "jake@jake.jake", gomock.Any()).Return(service.Session{}, domain.ErrInvalidCredentials)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnauthorized)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tc.buildStubs(b.users)
			req := newRequest(http.MethodPost, "/api/users/login", tc.body, nil)
			if tc.chunked {
				req.ContentLength = -1
				req.TransferEncoding = []string{"chunked"}
				req.Body = io.NopCloser(strings.NewReader(tc.body))
			}
			tc.checkResponse(t, b.do(req))
		})
	}
}

func TestPanicRecovery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(context.Context, string, string) (service.Session, error) { panic("pq: secret internal detail") })

	rec := b.do(newRequest(http.MethodPost, "/api/users/login", `{"user":{"email":"a@b.co","password":"jakejake"}}`, nil))
	requireInternalError(t, rec)
}

func TestRouting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		method        string
		target        string
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name:   "health check",
			method: http.MethodGet,
			target: "/healthz",
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"status":"ok"}`)
			},
		},
		{
			name:   "unknown route",
			method: http.MethodGet,
			target: "/api/no-such-thing",
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusNotFound, map[string][]string{"body": {"no such endpoint"}})
			},
		},
		{
			name:   "known route, wrong method",
			method: http.MethodPatch,
			target: "/api/user",
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusMethodNotAllowed, map[string][]string{"body": {"method not allowed on this endpoint"}})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t) // no expectations: no route here may reach a service
			tc.checkResponse(t, b.do(newRequest(tc.method, tc.target, "", nil)))
		})
	}
}
