package web_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// lookupCase is one request to a search-box endpoint (people or tags) with the mocks behind it.
type lookupCase struct {
	name          string
	target        string
	headers       map[string]string
	buildStubs    func(users *mocks.MockUserService, people *mocks.MockPeopleSearchService, tags *mocks.MockTagSearchService)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runLookupCases(t *testing.T, cases []lookupCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			users := mocks.NewMockUserService(ctrl)
			people := mocks.NewMockPeopleSearchService(ctrl)
			tags := mocks.NewMockTagSearchService(ctrl)
			tc.buildStubs(users, people, tags)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
				Auth:         web.NewAuthenticator(users, logger),
				SearchPeople: web.NewPeopleSearchHandler(people, logger),
				SearchTags:   web.NewTagSearchHandler(tags, logger),
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(http.MethodGet, tc.target, "", tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

// noPeopleSearch: bad input never reaches the use case.
func noPeopleSearch(_ *mocks.MockUserService, people *mocks.MockPeopleSearchService, _ *mocks.MockTagSearchService) {
	people.EXPECT().Users(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func noTagSearch(_ *mocks.MockUserService, _ *mocks.MockPeopleSearchService, tags *mocks.MockTagSearchService) {
	tags.EXPECT().Tags(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func require422(field, msg string) func(t *testing.T, rec *httptest.ResponseRecorder) {
	return func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{field: {msg}})
	}
}

func TestSearchUsers(t *testing.T) {
	t.Parallel()
	long := url.QueryEscape(strings.Repeat("é", 257))
	runLookupCases(t, []lookupCase{
		{
			name:   "anonymous: profiles in order, not followed, default limit 10, q trimmed",
			target: "/api/search/users?q=%20ali%20",
			buildStubs: func(_ *mocks.MockUserService, people *mocks.MockPeopleSearchService, _ *mocks.MockTagSearchService) {
				people.EXPECT().Users(gomock.Any(), int64(0), "ali", 10).Return([]domain.Profile{
					{Username: "ali", Bio: "b"}, {Username: "alice", Image: "https://example.com/a.png"}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"profiles":[
					{"username":"ali","bio":"b","image":"","following":false},
					{"username":"alice","bio":"","image":"https://example.com/a.png","following":false}]}`)
			},
		},
		{
			name:    "signed in: following as the viewer sees it, limit passed",
			target:  "/api/search/users?q=ali&limit=100",
			headers: authHeader,
			buildStubs: func(users *mocks.MockUserService, people *mocks.MockPeopleSearchService, _ *mocks.MockTagSearchService) {
				expectAuth(users)
				people.EXPECT().Users(gomock.Any(), authedID, "ali", 100).Return([]domain.Profile{{Username: "ali", Following: true}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"profiles":[{"username":"ali","bio":"","image":"","following":true}]}`)
			},
		},
		{
			name:   "nothing found is an empty list",
			target: "/api/search/users?q=zzz",
			buildStubs: func(_ *mocks.MockUserService, people *mocks.MockPeopleSearchService, _ *mocks.MockTagSearchService) {
				people.EXPECT().Users(gomock.Any(), int64(0), "zzz", 10).Return([]domain.Profile{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"profiles":[]}`)
			},
		},
		{
			name:   "LIKE metacharacters reach the use case as they are",
			target: "/api/search/users?q=" + url.QueryEscape(`a%_\`),
			buildStubs: func(_ *mocks.MockUserService, people *mocks.MockPeopleSearchService, _ *mocks.MockTagSearchService) {
				people.EXPECT().Users(gomock.Any(), int64(0), `a%_\`, 10).Return([]domain.Profile{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{
			name:   "256 characters are fine",
			target: "/api/search/users?q=" + url.QueryEscape(strings.Repeat("é", 256)),
			buildStubs: func(_ *mocks.MockUserService, people *mocks.MockPeopleSearchService, _ *mocks.MockTagSearchService) {
				people.EXPECT().Users(gomock.Any(), int64(0), strings.Repeat("é", 256), 10).Return([]domain.Profile{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{name: "missing q", target: "/api/search/users", buildStubs: noPeopleSearch, checkResponse: require422("q", "can't be blank")},
		{name: "blank q", target: "/api/search/users?q=%20%09", buildStubs: noPeopleSearch, checkResponse: require422("q", "can't be blank")},
		{name: "257 characters", target: "/api/search/users?q=" + long, buildStubs: noPeopleSearch,
			checkResponse: require422("q", "is too long (maximum is 256 characters)")},
		{name: "limit 0", target: "/api/search/users?q=a&limit=0", buildStubs: noPeopleSearch,
			checkResponse: require422("limit", "must be between 1 and 100")},
		{name: "limit 101", target: "/api/search/users?q=a&limit=101", buildStubs: noPeopleSearch,
			checkResponse: require422("limit", "must be between 1 and 100")},
		{name: "limit not a number", target: "/api/search/users?q=a&limit=ten", buildStubs: noPeopleSearch,
			checkResponse: require422("limit", "must be a whole number")},
		{name: "NUL in q", target: "/api/search/users?q=a%00b", buildStubs: noPeopleSearch,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code < 400 || rec.Code >= 500 {
					t.Errorf("status %d, want a 4xx", rec.Code)
				}
			}},
		{
			name:   "storage unavailable is a 503, its text not shown",
			target: "/api/search/users?q=ali",
			buildStubs: func(_ *mocks.MockUserService, people *mocks.MockPeopleSearchService, _ *mocks.MockTagSearchService) {
				people.EXPECT().Users(gomock.Any(), int64(0), "ali", 10).Return(nil, errors.Join(domain.ErrUnavailable, errors.New("pg: secret detail")))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusServiceUnavailable)
				if strings.Contains(rec.Body.String(), "secret") {
					t.Errorf("internal error text in the answer: %s", rec.Body)
				}
			},
		},
	})
}

func TestSearchTags(t *testing.T) {
	t.Parallel()
	runLookupCases(t, []lookupCase{
		{
			name:   "prefix, default limit, tags shape",
			target: "/api/search/tags?q=Go",
			buildStubs: func(_ *mocks.MockUserService, _ *mocks.MockPeopleSearchService, tags *mocks.MockTagSearchService) {
				tags.EXPECT().Tags(gomock.Any(), "Go", 10).Return([]string{"golang", "Go"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":["golang","Go"]}`)
			},
		},
		{
			name:   "limit and metacharacters",
			target: "/api/search/tags?q=" + url.QueryEscape(`100%_\`) + "&limit=1",
			buildStubs: func(_ *mocks.MockUserService, _ *mocks.MockPeopleSearchService, tags *mocks.MockTagSearchService) {
				tags.EXPECT().Tags(gomock.Any(), `100%_\`, 1).Return([]string{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireJSON(t, rec, http.StatusOK, `{"tags":[]}`) },
		},
		{
			name:    "a bad token does not matter: tags are public",
			target:  "/api/search/tags?q=go",
			headers: map[string]string{"Authorization": "Token garbled"},
			buildStubs: func(users *mocks.MockUserService, _ *mocks.MockPeopleSearchService, tags *mocks.MockTagSearchService) {
				users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
				tags.EXPECT().Tags(gomock.Any(), "go", 10).Return([]string{"go"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":["go"]}`)
			},
		},
		{name: "blank q", target: "/api/search/tags?q=%20", buildStubs: noTagSearch, checkResponse: require422("q", "can't be blank")},
		{name: "257 characters", target: "/api/search/tags?q=" + strings.Repeat("a", 257), buildStubs: noTagSearch,
			checkResponse: require422("q", "is too long (maximum is 256 characters)")},
		{name: "limit 101", target: "/api/search/tags?q=a&limit=101", buildStubs: noTagSearch,
			checkResponse: require422("limit", "must be between 1 and 100")},
	})
}
