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

// searchLimitBundle is the router with the three search endpoints behind a search budget.
type searchLimitBundle struct {
	users   *mocks.MockUserService
	limiter *mocks.MockRateLimiter
	search  *mocks.MockSearchService
	people  *mocks.MockPeopleSearchService
	tags    *mocks.MockTagSearchService
}

type searchLimitCase struct {
	name          string
	target        string
	headers       map[string]string
	proxies       []string // INKWELL_TRUSTED_PROXIES
	buildStubs    func(b searchLimitBundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

var searchRule = web.RateRule{Name: "search", Limit: 120, Window: time.Minute}

func runSearchLimitCases(t *testing.T, cases []searchLimitCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			b := searchLimitBundle{users: mocks.NewMockUserService(ctrl), limiter: mocks.NewMockRateLimiter(ctrl),
				search: mocks.NewMockSearchService(ctrl), people: mocks.NewMockPeopleSearchService(ctrl), tags: mocks.NewMockTagSearchService(ctrl)}
			tc.buildStubs(b)
			logger := slog.New(slog.DiscardHandler)
			cfg := web.RouterConfig{MaxBodyBytes: maxBodyBytes, TrustedProxies: tc.proxies, RateLimits: web.RateLimits{Search: searchRule}}
			router := web.NewRouter(cfg, logger, web.Handlers{
				Auth: web.NewAuthenticator(b.users, logger), Limiter: b.limiter, Search: web.NewSearchHandler(b.search, logger),
				SearchPeople: web.NewPeopleSearchHandler(b.people, logger), SearchTags: web.NewTagSearchHandler(b.tags, logger),
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(http.MethodGet, tc.target, "", tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

// TestRateLimitSearch: every search endpoint counts against one per-client budget, the signed-in
// user's or else the client IP's (through trusted proxies only), and a search over it is 429 with
// Retry-After before the search runs.
func TestRateLimitSearch(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	allowed := domain.RateDecision{Allowed: true, Limit: 120, Remaining: 119, Reset: 500 * time.Millisecond}
	refused := domain.RateDecision{Allowed: false, Limit: 120, Remaining: 0, Reset: time.Minute, RetryAfter: 400 * time.Millisecond}
	budget := func(b searchLimitBundle, key string, d domain.RateDecision, err error) {
		b.limiter.EXPECT().Allow(a, "search:"+key, 120, time.Minute).Return(d, err)
	}
	noSearch := func(b searchLimitBundle) {
		b.search.EXPECT().Articles(a, a, a).Times(0)
		b.people.EXPECT().Users(a, a, a, a).Times(0)
		b.tags.EXPECT().Tags(a, a, a).Times(0)
	}
	runSearchLimitCases(t, []searchLimitCase{
		{
			name: "an anonymous article search counts against its IP's budget", target: "/api/search/articles?q=dragons",
			buildStubs: func(b searchLimitBundle) {
				budget(b, "ip:192.0.2.1", allowed, nil)
				b.search.EXPECT().Articles(a, int64(0), a).Return(service.SearchResult{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireRateHeaders(t, rec, "120", "119", "1", "")
			},
		},
		{
			name: "a signed-in search counts against the user's budget", target: "/api/search/articles?q=dragons", headers: authHeader,
			buildStubs: func(b searchLimitBundle) {
				expectAuth(b.users)
				budget(b, "user:7", allowed, nil)
				b.search.EXPECT().Articles(a, authedID, a).Return(service.SearchResult{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{
			name: "over the budget: 429, Retry-After until the next search fits, the search never runs", target: "/api/search/articles?q=dragons",
			buildStubs: func(b searchLimitBundle) {
				budget(b, "ip:192.0.2.1", refused, nil)
				noSearch(b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusTooManyRequests, map[string][]string{"body": {"too many requests; retry after 1 seconds"}})
				requireRateHeaders(t, rec, "120", "0", "60", "1")
			},
		},
		{
			name: "people search shares the budget", target: "/api/search/users?q=jake", headers: authHeader,
			buildStubs: func(b searchLimitBundle) {
				expectAuth(b.users)
				budget(b, "user:7", refused, nil)
				noSearch(b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusTooManyRequests) },
		},
		{
			name: "tag search shares the IP's budget; it never reads a token", target: "/api/search/tags?q=dr", headers: authHeader,
			buildStubs: func(b searchLimitBundle) {
				b.users.EXPECT().Authenticate(a, a).Times(0)
				budget(b, "ip:192.0.2.1", allowed, nil)
				b.tags.EXPECT().Tags(a, "dr", a).Return([]string{"dragons"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{
			name: "X-Forwarded-For from a peer that is not a trusted proxy is ignored", target: "/api/search/tags?q=dr",
			headers: map[string]string{"X-Forwarded-For": "203.0.113.9"},
			buildStubs: func(b searchLimitBundle) {
				budget(b, "ip:192.0.2.1", refused, nil)
				noSearch(b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusTooManyRequests) },
		},
		{
			name: "behind a trusted proxy the forwarded client is counted", target: "/api/search/tags?q=dr",
			headers: map[string]string{"X-Forwarded-For": "203.0.113.9"}, proxies: []string{"192.0.2.1"},
			buildStubs: func(b searchLimitBundle) {
				budget(b, "ip:203.0.113.9", allowed, nil)
				b.tags.EXPECT().Tags(a, "dr", a).Return(nil, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{
			name: "a bad token is refused before it is counted", target: "/api/search/articles?q=dragons",
			headers: map[string]string{"Authorization": "Token bad"},
			buildStubs: func(b searchLimitBundle) {
				b.users.EXPECT().Authenticate(a, "bad").Return(domain.Credential{}, domain.ErrUnauthorized)
				b.limiter.EXPECT().Allow(a, a, a, a).Times(0)
				noSearch(b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
		{
			name: "the limiter failing lets the search through, without headers", target: "/api/search/articles?q=dragons",
			buildStubs: func(b searchLimitBundle) {
				budget(b, "ip:192.0.2.1", domain.RateDecision{}, errLimiterDown)
				b.search.EXPECT().Articles(a, int64(0), a).Return(service.SearchResult{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireRateHeaders(t, rec, "", "", "", "")
			},
		},
	})
}
