package web_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

var (
	testLimits = web.RateLimits{
		Auth:   web.RateRule{Name: "auth", Limit: 5, Window: time.Minute},
		Writes: web.RateRule{Name: "writes", Limit: 3, Window: time.Minute},
	}
	errLimiterDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
	loginBody      = `{"user":{"email":"jake@jake.jake","password":"jakejakejake"}}`
	loggedIn       = service.Session{User: domain.User{ID: 7, Email: "jake@jake.jake", Username: "jake"}, Token: "T", Refresh: "R"}
)

// requireRateHeaders fails unless the X-RateLimit-* headers (and Retry-After, "" for none) are
// exactly these.
func requireRateHeaders(t *testing.T, rec *httptest.ResponseRecorder, limit, remaining, reset, retryAfter string) {
	t.Helper()
	for name, want := range map[string]string{
		"X-RateLimit-Limit": limit, "X-RateLimit-Remaining": remaining, "X-RateLimit-Reset": reset, "Retry-After": retryAfter,
	} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestRateLimitAuth(t *testing.T) {
	t.Parallel()
	allow := func(d domain.RateDecision, err error) func(t *testing.T, b safetyBundle) {
		return func(t *testing.T, b safetyBundle) {
			b.limiter.EXPECT().Allow(gomock.Any(), "auth:ip:192.0.2.1", 5, time.Minute).Return(d, err)
		}
	}
	runSafetyCases(t, http.MethodPost, "/api/users/login", []safetyCase{
		{
			name:   "under the limit: the request runs and the headers tell the budget",
			body:   loginBody,
			limits: testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				allow(domain.RateDecision{Allowed: true, Limit: 5, Remaining: 4, Reset: 59_400 * time.Millisecond}, nil)(t, b)
				b.users.EXPECT().Login(gomock.Any(), "jake@jake.jake", "jakejakejake").Return(loggedIn, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireRateHeaders(t, rec, "5", "4", "60", "")
			},
		},
		{
			name:   "the last allowed request shows 0 remaining and still runs",
			body:   loginBody,
			limits: testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				allow(domain.RateDecision{Allowed: true, Limit: 5, Remaining: 0, Reset: 10 * time.Second}, nil)(t, b)
				b.users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).Return(service.Session{}, domain.ErrInvalidCredentials)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnauthorized)
				requireRateHeaders(t, rec, "5", "0", "10", "")
			},
		},
		{
			name:   "over the limit: 429 with Retry-After (until one more fits), the handler never runs",
			body:   loginBody,
			limits: testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				allow(domain.RateDecision{Allowed: false, Limit: 5, Remaining: 0, Reset: time.Minute, RetryAfter: 11500 * time.Millisecond}, nil)(t, b)
				b.users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusTooManyRequests, map[string][]string{"body": {"too many requests; retry after 12 seconds"}})
				requireRateHeaders(t, rec, "5", "0", "60", "12")
			},
		},
		{
			name:   "a wait within the second rounds up: Retry-After is never 0",
			body:   loginBody,
			limits: testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				allow(domain.RateDecision{Allowed: false, Limit: 5, Remaining: 0, Reset: 200 * time.Millisecond, RetryAfter: 200 * time.Millisecond}, nil)(t, b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusTooManyRequests)
				requireRateHeaders(t, rec, "5", "0", "1", "1")
			},
		},
		{
			name:   "the limiter failing lets the request through, without headers",
			body:   loginBody,
			limits: testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				allow(domain.RateDecision{}, errLimiterDown)(t, b)
				b.users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).Return(loggedIn, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireRateHeaders(t, rec, "", "", "", "")
			},
		},
		{
			name: "a disabled rule never asks the limiter",
			body: loginBody,
			buildStubs: func(t *testing.T, b safetyBundle) {
				b.limiter.EXPECT().Allow(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				b.users.EXPECT().Login(gomock.Any(), gomock.Any(), gomock.Any()).Return(loggedIn, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireRateHeaders(t, rec, "", "", "", "")
			},
		},
		{
			name:    "registration counts against the same budget, before its Idempotency-Key is looked at",
			target:  "/api/users",
			body:    `{"user":{"username":"jake","email":"jake@jake.jake","password":"jakejakejake"}}`,
			headers: map[string]string{"Idempotency-Key": "reg"},
			limits:  testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				allow(domain.RateDecision{Allowed: false, Limit: 5, Remaining: 0, Reset: time.Second, RetryAfter: time.Second}, nil)(t, b)
				b.users.EXPECT().RegisterIdempotent(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				b.users.EXPECT().Register(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusTooManyRequests)
			},
		},
	})
}

func TestRateLimitWrites(t *testing.T) {
	t.Parallel()
	allowed := domain.RateDecision{Allowed: true, Limit: 3, Remaining: 2, Reset: 45 * time.Second}
	denied := domain.RateDecision{Allowed: false, Limit: 3, Remaining: 0, Reset: time.Minute, RetryAfter: 15 * time.Second}
	writes := func(d domain.RateDecision, err error) func(b safetyBundle) {
		return func(b safetyBundle) {
			b.limiter.EXPECT().Allow(gomock.Any(), "writes:user:7", 3, time.Minute).Return(d, err)
		}
	}
	runSafetyCases(t, http.MethodPost, "/api/articles", []safetyCase{
		{
			name:    "a write counts against the user's budget",
			body:    idemArticleBody,
			headers: authHeader,
			limits:  testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				writes(allowed, nil)(b)
				b.articles.EXPECT().Create(gomock.Any(), authedID, idemArticleIn).Return(keyed, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireSlug(t, rec, http.StatusCreated, "keyed")
				requireRateHeaders(t, rec, "3", "2", "45", "")
			},
		},
		{
			name:    "a write over the budget: 429, nothing written",
			body:    idemArticleBody,
			headers: authHeader,
			limits:  testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				writes(denied, nil)(b)
				b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusTooManyRequests)
				requireRateHeaders(t, rec, "3", "0", "60", "15")
			},
		},
		{
			name:    "deletes count too",
			method:  http.MethodDelete,
			target:  "/api/articles/keyed",
			headers: authHeader,
			limits:  testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				writes(denied, nil)(b)
				b.articles.EXPECT().Delete(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusTooManyRequests) },
		},
		{
			name:    "reads by a signed-in user are not limited",
			method:  http.MethodGet,
			target:  "/api/articles/feed",
			headers: authHeader,
			limits:  testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				b.limiter.EXPECT().Allow(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				b.articles.EXPECT().Feed(gomock.Any(), authedID, gomock.Any()).Return(service.ArticleList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireRateHeaders(t, rec, "", "", "", "")
			},
		},
		{
			name:   "an anonymous write is refused before it is counted",
			body:   idemArticleBody,
			limits: testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				b.limiter.EXPECT().Allow(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
		{
			name:    "the limiter failing lets the write through",
			body:    idemArticleBody,
			headers: authHeader,
			limits:  testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				writes(domain.RateDecision{}, errLimiterDown)(b)
				b.articles.EXPECT().Create(gomock.Any(), authedID, idemArticleIn).Return(keyed, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireSlug(t, rec, http.StatusCreated, "keyed")
				requireRateHeaders(t, rec, "", "", "", "")
			},
		},
		{
			name:    "a limited write under an Idempotency-Key never reaches the store",
			body:    idemArticleBody,
			headers: with(authHeader, "Idempotency-Key", "k"),
			limits:  testLimits,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				writes(denied, nil)(b)
				b.articles.EXPECT().CreateIdempotent(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusTooManyRequests) },
		},
	})
}
