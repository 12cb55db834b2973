package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// accountCase is one request to an account route: what the services expect, what comes back.
type accountCase struct {
	name, method, path, body string
	headers                  map[string]string
	buildStubs               func(users *mocks.MockUserService, account *mocks.MockAccountService)
	checkResponse            func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runAccountCases(t *testing.T, cases []accountCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			users, account := mocks.NewMockUserService(ctrl), mocks.NewMockAccountService(ctrl)
			tc.buildStubs(users, account)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
				Auth: web.NewAuthenticator(users, logger), Account: web.NewAccountHandler(account, logger),
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(tc.method, tc.path, tc.body, tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

// untouchedAccount proves a request never reached the account service.
func untouchedAccount(a *mocks.MockAccountService) {
	anyArg := gomock.Any()
	a.EXPECT().SendVerification(anyArg, anyArg).Times(0)
	a.EXPECT().VerifyEmail(anyArg, anyArg, anyArg).Times(0)
	a.EXPECT().RequestPasswordReset(anyArg, anyArg).Times(0)
	a.EXPECT().ConfirmPasswordReset(anyArg, anyArg, anyArg, anyArg).Times(0)
}

func TestAccountRoutes(t *testing.T) {
	t.Parallel()
	anyArg := gomock.Any()
	codeInvalid := map[string][]string{"code": {"is invalid or has expired"}}
	runAccountCases(t, []accountCase{
		{
			name: "verify/ok", method: "POST", path: "/api/user/email/verify", body: `{"user":{"code":"abcde-23456"}}`, headers: authHeader,
			buildStubs: func(u *mocks.MockUserService, a *mocks.MockAccountService) {
				expectAuth(u)
				a.EXPECT().VerifyEmail(anyArg, authedID, "abcde-23456").Return(domain.User{ID: authedID, Email: "jake@jake.jake", EmailVerified: true}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"email":"jake@jake.jake","emailVerified":true}`)
			},
		},
		{
			name: "verify/wrong_code", method: "POST", path: "/api/user/email/verify", body: `{"user":{"code":"ZZZZZ-ZZZZZ"}}`, headers: authHeader,
			buildStubs: func(u *mocks.MockUserService, a *mocks.MockAccountService) {
				expectAuth(u)
				a.EXPECT().VerifyEmail(anyArg, authedID, "ZZZZZ-ZZZZZ").Return(domain.User{}, domain.ErrAccountCodeInvalid)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, codeInvalid)
			},
		},
		{
			name: "verify/anonymous_never_reaches_the_service", method: "POST", path: "/api/user/email/verify", body: `{"user":{"code":"ABCDE-23456"}}`,
			buildStubs: func(_ *mocks.MockUserService, a *mocks.MockAccountService) { untouchedAccount(a) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnauthorized)
			},
		},
		{
			name: "verify/malformed_json_never_reaches_the_service", method: "POST", path: "/api/user/email/verify", body: `{"user":{"code":[1]}}`, headers: authHeader,
			buildStubs: func(u *mocks.MockUserService, a *mocks.MockAccountService) {
				expectAuth(u)
				untouchedAccount(a)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code < 400 || rec.Code >= 500 {
					t.Fatalf("status %d, want a 4xx; body %s", rec.Code, rec.Body)
				}
			},
		},
		{
			name: "resend/too_soon_is_429_with_retry_after", method: "POST", path: "/api/user/email/verify/resend", headers: authHeader,
			buildStubs: func(u *mocks.MockUserService, a *mocks.MockAccountService) {
				expectAuth(u)
				a.EXPECT().SendVerification(anyArg, authedID).Return(&domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: 42 * time.Second})
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusTooManyRequests)
				if rec.Header().Get("Retry-After") != "42" {
					t.Fatalf("Retry-After = %q", rec.Header().Get("Retry-After"))
				}
			},
		},
		{
			name: "resend/sent", method: "POST", path: "/api/user/email/verify/resend", headers: authHeader,
			buildStubs: func(u *mocks.MockUserService, a *mocks.MockAccountService) {
				expectAuth(u)
				a.EXPECT().SendVerification(anyArg, authedID).Return(nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusAccepted, `{"sent":true,"expiresIn":86400,"resendAfter":60}`)
			},
		},
		{
			name: "reset/accepted", method: "POST", path: "/api/users/password/reset", body: `{"user":{"email":"jake@jake.jake"}}`,
			buildStubs: func(_ *mocks.MockUserService, a *mocks.MockAccountService) {
				a.EXPECT().RequestPasswordReset(anyArg, "jake@jake.jake").Return(nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusAccepted, `{"expiresIn":900}`)
			},
		},
		{
			name: "reset/internal_error_stays_inside", method: "POST", path: "/api/users/password/reset", body: `{"user":{"email":"jake@jake.jake"}}`,
			buildStubs: func(_ *mocks.MockUserService, a *mocks.MockAccountService) {
				a.EXPECT().RequestPasswordReset(anyArg, anyArg).Return(errInternal)
			},
			checkResponse: requireInternalError,
		},
		{
			name: "confirm/done", method: "POST", path: "/api/users/password/reset/confirm",
			body: `{"user":{"email":"jake@jake.jake","code":"ABCDE-23456","password":"new-password-123"}}`,
			buildStubs: func(_ *mocks.MockUserService, a *mocks.MockAccountService) {
				a.EXPECT().ConfirmPasswordReset(anyArg, "jake@jake.jake", "ABCDE-23456", "new-password-123").Return(nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusNoContent)
				if rec.Body.Len() != 0 {
					t.Fatalf("204 with a body: %s", rec.Body)
				}
			},
		},
		{
			name: "confirm/invalid_code", method: "POST", path: "/api/users/password/reset/confirm",
			body: `{"user":{"email":"jake@jake.jake","code":"ABCDE-23456","password":"new-password-123"}}`,
			buildStubs: func(_ *mocks.MockUserService, a *mocks.MockAccountService) {
				a.EXPECT().ConfirmPasswordReset(anyArg, anyArg, anyArg, anyArg).Return(domain.ErrAccountCodeInvalid)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, codeInvalid)
			},
		},
		{
			name: "confirm/not_json_never_reaches_the_service", method: "POST", path: "/api/users/password/reset/confirm", body: `{"user":`,
			buildStubs: func(_ *mocks.MockUserService, a *mocks.MockAccountService) { untouchedAccount(a) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code < 400 || rec.Code >= 500 {
					t.Fatalf("status %d, want a 4xx; body %s", rec.Code, rec.Body)
				}
			},
		},
	})
}
