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

func codeLoginRouter(t *testing.T) (http.Handler, *mocks.MockCodeLoginService) {
	t.Helper()
	router, codes, _ := codeLoginRouterWithUsers(t)
	return router, codes
}

func codeLoginRouterWithUsers(t *testing.T) (http.Handler, *mocks.MockCodeLoginService, *mocks.MockUserService) {
	t.Helper()
	ctrl := gomock.NewController(t)
	codes := mocks.NewMockCodeLoginService(ctrl)
	users := mocks.NewMockUserService(ctrl)
	logger := slog.New(slog.DiscardHandler)
	return web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
		Auth: web.NewAuthenticator(users, logger), Users: web.NewUserHandler(users, logger),
		CodeLogin: web.NewCodeLoginHandler(codes, logger),
	}), codes, users
}

// TestSendStepUpCode: a session asks for a step-up code for its own account; anonymous requests
// and API keys never reach the service; a too-soon refusal is 429 with Retry-After.
func TestSendStepUpCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		headers    map[string]string
		buildStubs func(codes *mocks.MockCodeLoginService, users *mocks.MockUserService)
		status     int
		retryAfter string
	}{
		{
			name: "session", headers: authHeader, status: http.StatusAccepted,
			buildStubs: func(codes *mocks.MockCodeLoginService, users *mocks.MockUserService) {
				expectAuth(users)
				codes.EXPECT().SendStepUpCode(gomock.Any(), authedID).Return(nil)
			},
		},
		{
			name: "too_soon", headers: authHeader, status: http.StatusTooManyRequests, retryAfter: "42",
			buildStubs: func(codes *mocks.MockCodeLoginService, users *mocks.MockUserService) {
				expectAuth(users)
				codes.EXPECT().SendStepUpCode(gomock.Any(), authedID).Return(&domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: 42 * time.Second})
			},
		},
		{
			name: "anonymous", status: http.StatusUnauthorized,
			buildStubs: func(codes *mocks.MockCodeLoginService, _ *mocks.MockUserService) {
				codes.EXPECT().SendStepUpCode(gomock.Any(), gomock.Any()).Times(0)
			},
		},
		{
			name: "api_key", headers: map[string]string{"Authorization": "Bearer " + apiKeyToken}, status: http.StatusForbidden,
			buildStubs: func(codes *mocks.MockCodeLoginService, users *mocks.MockUserService) {
				users.EXPECT().Authenticate(gomock.Any(), apiKeyToken).Return(writeKeyCred, nil)
				codes.EXPECT().SendStepUpCode(gomock.Any(), gomock.Any()).Times(0)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			router, codes, users := codeLoginRouterWithUsers(t)
			tc.buildStubs(codes, users)
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(http.MethodPost, "/api/user/step-up/code", "", tc.headers))
			if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.retryAfter {
				t.Fatalf("status %d (Retry-After %q), want %d (%q): %s", rec.Code, rec.Header().Get("Retry-After"), tc.status, tc.retryAfter, rec.Body)
			}
		})
	}
}

// TestCodeLoginErrors: every refused guess is one 401 with one message; the refusals that pass
// with time are 429 with Retry-After; a store that cannot meter is 503 without its error text.
func TestCodeLoginErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		path, body string
		buildStubs func(codes *mocks.MockCodeLoginService)
		status     int
		retryAfter string
		fields     map[string][]string
	}{
		{
			name: "wrong_code_is_generic", path: "/api/users/login/code", body: `{"email":"a@example.com","code":"123456"}`,
			buildStubs: func(codes *mocks.MockCodeLoginService) {
				codes.EXPECT().Login(gomock.Any(), "a@example.com", "", "123456").Return(service.Session{}, &domain.CodeError{Reason: domain.CodeInvalid})
			},
			status: http.StatusUnauthorized, fields: map[string][]string{"code": {"is invalid or has expired"}},
		},
		{
			name: "locked_target_is_429", path: "/api/users/login/code", body: `{"phone":"+4915112345678","code":"123456"}`,
			buildStubs: func(codes *mocks.MockCodeLoginService) {
				codes.EXPECT().Login(gomock.Any(), "", "+4915112345678", "123456").
					Return(service.Session{}, &domain.CodeError{Reason: domain.CodeLocked, RetryAfter: 5 * time.Hour})
			},
			status: http.StatusTooManyRequests, retryAfter: "18000",
			fields: map[string][]string{"code": {"was entered wrong too many times for this address; ask for a new code: the next one is longer and works"}},
		},
		{
			name: "daily_cap_is_429", path: "/api/users/login/code/send", body: `{"email":"a@example.com"}`,
			buildStubs: func(codes *mocks.MockCodeLoginService) {
				codes.EXPECT().Send(gomock.Any(), "a@example.com", "").Return(&domain.CodeError{Reason: domain.CodeSendCap, RetryAfter: time.Hour})
			},
			status: http.StatusTooManyRequests, retryAfter: "3600",
			fields: map[string][]string{"code": {"was sent too many times to this address from here today; try again later"}},
		},
		{
			name: "unmetered_send_is_503", path: "/api/users/login/code/send", body: `{"email":"a@example.com"}`,
			buildStubs: func(codes *mocks.MockCodeLoginService) {
				codes.EXPECT().Send(gomock.Any(), "a@example.com", "").Return(domain.ErrUnavailable)
			},
			status: http.StatusServiceUnavailable, retryAfter: "5",
			fields: map[string][]string{"body": {"the service is temporarily unavailable; retry shortly"}},
		},
		{
			name: "not_json_never_reaches_the_service", path: "/api/users/login/code", body: `{"email":`,
			buildStubs: func(codes *mocks.MockCodeLoginService) {
				codes.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			status: http.StatusUnprocessableEntity,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			router, codes := codeLoginRouter(t)
			tc.buildStubs(codes)
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(http.MethodPost, tc.path, tc.body, nil))
			if tc.fields != nil {
				requireErrors(t, rec, tc.status, tc.fields)
			} else if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if got := rec.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Fatalf("Retry-After %q, want %q", got, tc.retryAfter)
			}
		})
	}
}
