package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
)

// TestErrorMapping drives each kind of service error through one route (an anonymous profile
// read) to check the status and RealWorld body a client sees for it.
func TestErrorMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		err           error
		clientGone    bool // the request's context is canceled, as when the client disconnects
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "validation error, wrapped",
			err:  fmt.Errorf("get profile: %w", domain.NewValidationError("username", "is invalid")),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"username": {"is invalid"}})
			},
		},
		{
			name: "invalid credentials",
			err:  domain.ErrInvalidCredentials,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"email or password": {"is invalid"}})
			},
		},
		{
			name: "unauthorized",
			err:  fmt.Errorf("%w: token is expired", domain.ErrUnauthorized),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing, invalid or expired"}})
			},
		},
		{
			name: "forbidden",
			err:  domain.ErrForbidden,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusForbidden, map[string][]string{"body": {"you are not allowed to do this"}})
			},
		},
		{
			name: "not found, wrapped",
			err:  fmt.Errorf("get user by username: %w", domain.ErrNotFound),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusNotFound, map[string][]string{"body": {"not found"}})
			},
		},
		{
			name: "conflict",
			err:  domain.ErrConflict,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusConflict, map[string][]string{"body": {"the resource was changed or is busy; reload and retry"}})
			},
		},
		{
			name: "overloaded (load shed while Redis is down) is 503, retry in a second",
			err:  fmt.Errorf("get article: %w", domain.ErrOverloaded),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusServiceUnavailable, map[string][]string{
					"body": {"the service is busy; retry in a second"},
				})
				if got := rec.Header().Get("Retry-After"); got != "1" {
					t.Errorf("Retry-After = %q, want 1", got)
				}
			},
		},
		{
			name: "unavailable says when to retry",
			err:  fmt.Errorf("query: %w", domain.ErrUnavailable),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusServiceUnavailable, map[string][]string{
					"body": {"the service is temporarily unavailable; retry shortly"},
				})
				if secs, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || secs <= 0 {
					t.Errorf("Retry-After = %q, want a positive number of seconds", rec.Header().Get("Retry-After"))
				}
			},
		},
		{
			name: "a deadline that ran out is 503, not 500",
			err:  fmt.Errorf("load article: %w", context.DeadlineExceeded),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusServiceUnavailable, map[string][]string{"body": {"the request took too long; retry shortly"}})
				if secs, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || secs <= 0 {
					t.Errorf("Retry-After = %q, want a positive number of seconds", rec.Header().Get("Retry-After"))
				}
			},
		},
		{
			name:          "anything else is a generic 500",
			err:           fmt.Errorf("get user by username: %w", errInternal),
			checkResponse: requireInternalError,
		},
		{
			name:       "canceled because the client went away",
			err:        context.Canceled,
			clientGone: true,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, 499)
				if rec.Body.Len() != 0 {
					t.Errorf("body = %s, want none", rec.Body)
				}
			},
		},
		{
			name:          "canceled while the client still waits is a 500",
			err:           context.Canceled,
			checkResponse: requireInternalError,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.profiles.EXPECT().Get(gomock.Any(), int64(0), "celeb").Return(domain.Profile{}, tc.err)
			req := newRequest(http.MethodGet, "/api/profiles/celeb", "", nil)
			if tc.clientGone {
				ctx, cancel := context.WithCancel(req.Context())
				cancel()
				req = req.WithContext(ctx)
			}
			tc.checkResponse(t, b.do(req))
		})
	}
}
