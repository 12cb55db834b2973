package web_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// colBundle is one test's router with the collection and history services mocked (the shared
// bundle of helpers_test.go does not mount them).
type colBundle struct {
	users   *mocks.MockUserService
	cols    *mocks.MockCollectionService
	history *mocks.MockHistoryService
	router  http.Handler
}

func setupCollections(t *testing.T) colBundle {
	t.Helper()
	ctrl := gomock.NewController(t)
	logger := slog.New(slog.DiscardHandler)
	b := colBundle{
		users:   mocks.NewMockUserService(ctrl),
		cols:    mocks.NewMockCollectionService(ctrl),
		history: mocks.NewMockHistoryService(ctrl),
	}
	b.router = web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
		Auth:        web.NewAuthenticator(b.users, logger),
		Users:       web.NewUserHandler(b.users, logger),
		Profiles:    web.NewProfileHandler(mocks.NewMockProfileService(ctrl), logger),
		Articles:    web.NewArticleHandler(mocks.NewMockArticleService(ctrl), nil, logger),
		Comments:    web.NewCommentHandler(mocks.NewMockCommentService(ctrl), logger),
		Collections: web.NewCollectionHandler(b.cols, b.history, logger),
	})
	return b
}

// colCase is one request to a collection or history route.
type colCase struct {
	name          string
	target        string // overrides the table's default target when set
	body          string
	headers       map[string]string // nil: authHeader
	buildStubs    func(b colBundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

var noHeaders = map[string]string{}

// runColCases serves each case as method target, each in its own parallel subtest with fresh mocks.
func runColCases(t *testing.T, method, target string, tests []colCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupCollections(t)
			tc.buildStubs(b)
			u := target
			if tc.target != "" {
				u = tc.target
			}
			h := tc.headers
			if h == nil {
				h = authHeader
			}
			rec := httptest.NewRecorder()
			b.router.ServeHTTP(rec, newRequest(method, u, tc.body, h))
			tc.checkResponse(t, rec)
		})
	}
}

// untouched proves neither service was called.
func untouched(b colBundle) {
	b.cols.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	b.cols.EXPECT().List(gomock.Any(), gomock.Any()).Times(0)
	b.cols.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	b.cols.EXPECT().Delete(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	b.cols.EXPECT().Collect(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	b.cols.EXPECT().Uncollect(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	b.cols.EXPECT().Articles(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	b.history.EXPECT().History(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

// signedInButUntouched: the token is checked, then the request is refused before any service call.
func signedInButUntouched(b colBundle) {
	expectAuth(b.users)
	untouched(b)
}

// anonymousRefused: no token, so nothing is asked of anyone.
func anonymousRefused(b colBundle) {
	b.users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
	untouched(b)
}

func badTokenRefused(b colBundle) {
	b.users.EXPECT().Authenticate(gomock.Any(), "BAD").Return(domain.Credential{}, domain.ErrUnauthorized)
	untouched(b)
}

func wantErrors(status int, fields map[string][]string) func(t *testing.T, rec *httptest.ResponseRecorder) {
	return func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		requireErrors(t, rec, status, fields)
	}
}

var (
	wantNotFound     = wantErrors(http.StatusNotFound, map[string][]string{"body": {"not found"}})
	wantForbidden    = wantErrors(http.StatusForbidden, map[string][]string{"body": {"you are not allowed to do this"}})
	wantBadToken     = wantErrors(http.StatusUnauthorized, map[string][]string{"token": {"is missing, invalid or expired"}})
	wantNoToken      = wantErrors(http.StatusUnauthorized, map[string][]string{"token": {"is missing; send Authorization: Token <jwt>"}})
	wantInvalidJSON  = wantErrors(http.StatusUnprocessableEntity, map[string][]string{"body": {"is not valid JSON"}})
	wantEmptyBody    = wantErrors(http.StatusUnprocessableEntity, map[string][]string{"body": {"request body is empty; send a JSON object"}})
	wantInternal     = wantErrors(http.StatusInternalServerError, map[string][]string{"body": {"internal server error"}})
	errFolderStorage = fmt.Errorf("list collections of 7: %w", fmt.Errorf("pq: connection reset"))
	wantJSONBody     = func(status int, body string) func(t *testing.T, rec *httptest.ResponseRecorder) {
		return func(t *testing.T, rec *httptest.ResponseRecorder) {
			t.Helper()
			requireJSON(t, rec, status, body)
		}
	}
)

// later is jake's folder. Its times are in another zone with sub-millisecond digits: responses
// show UTC milliseconds.
var (
	later = domain.Collection{
		ID: 31, OwnerID: authedID, Name: "Later", Description: "to read", ArticleCount: 2,
		CreatedAt: time.Date(2026, 3, 4, 6, 7, 8, 123_456_789, time.FixedZone("CET", 3600)),
		UpdatedAt: time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC),
	}
	laterJSON = `{"id":31,"name":"Later","description":"to read","articlesCount":2,` +
		`"createdAt":"2026-03-04T05:07:08.123Z","updatedAt":"2026-03-05T00:00:00.000Z"}`
	empty     = domain.Collection{ID: 32, OwnerID: authedID, Name: "Empty", CreatedAt: later.UpdatedAt, UpdatedAt: later.UpdatedAt}
	emptyJSON = `{"id":32,"name":"Empty","description":"","articlesCount":0,` +
		`"createdAt":"2026-03-05T00:00:00.000Z","updatedAt":"2026-03-05T00:00:00.000Z"}`
)

// collectionInput matches a service.CollectionInput with these fields (nil: absent).
func collectionInput(name, description *string) gomock.Matcher {
	same := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return gomock.Cond(func(in service.CollectionInput) bool {
		return same(in.Name, name) && same(in.Description, description)
	})
}

func sp(s string) *string { return &s }

func TestCreateCollection(t *testing.T) {
	t.Parallel()
	runColCases(t, http.MethodPost, "/api/collections", []colCase{
		{
			name: "created",
			body: `{"collection":{"name":"Later","description":"to read"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Create(gomock.Any(), authedID, collectionInput(sp("Later"), sp("to read"))).Return(later, nil)
			},
			checkResponse: wantJSONBody(http.StatusCreated, `{"collection":`+laterJSON+`}`),
		},
		{
			name: "an absent description reaches the service as absent",
			body: `{"collection":{"name":"Empty"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Create(gomock.Any(), authedID, collectionInput(sp("Empty"), nil)).Return(empty, nil)
			},
			checkResponse: wantJSONBody(http.StatusCreated, `{"collection":`+emptyJSON+`}`),
		},
		{
			name: "the service's validation errors are 422",
			body: `{"collection":{"name":"Later"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Create(gomock.Any(), authedID, gomock.Any()).Return(domain.Collection{}, domain.NewValidationError("name", "has already been taken"))
			},
			checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"name": {"has already been taken"}}),
		},
		{name: "malformed JSON", body: `{"collection":`, buildStubs: signedInButUntouched, checkResponse: wantInvalidJSON},
		{name: "no body", buildStubs: signedInButUntouched, checkResponse: wantEmptyBody},
		{name: "trailing garbage", body: `{"collection":{"name":"x"}} {}`, buildStubs: signedInButUntouched, checkResponse: wantInvalidJSON},
		{
			name: "a name that is not a string", body: `{"collection":{"name":42}}`, buildStubs: signedInButUntouched,
			checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"name": {"must be a string"}}),
		},
		{
			name: "a body over the limit", body: `{"collection":{"name":"` + strings.Repeat("n", maxBodyBytes) + `"}}`,
			buildStubs: func(b colBundle) {
				b.users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).AnyTimes() // refused before or after the token check
				untouched(b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusRequestEntityTooLarge)
			},
		},
		{name: "without a token", body: `{"collection":{"name":"x"}}`, headers: noHeaders, buildStubs: anonymousRefused, checkResponse: wantNoToken},
		{name: "with a bad token", body: `{"collection":{"name":"x"}}`, headers: badTokenHeader, buildStubs: badTokenRefused, checkResponse: wantBadToken},
		{
			name: "a storage failure is a generic 500",
			body: `{"collection":{"name":"x"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.Collection{}, errFolderStorage)
			},
			checkResponse: wantInternal,
		},
	})
}

func TestListCollections(t *testing.T) {
	t.Parallel()
	runColCases(t, http.MethodGet, "/api/collections", []colCase{
		{
			name: "the viewer's folders",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().List(gomock.Any(), authedID).Return([]domain.Collection{later, empty}, nil)
			},
			checkResponse: wantJSONBody(http.StatusOK, `{"collections":[`+laterJSON+`,`+emptyJSON+`]}`),
		},
		{
			name: "none is an empty list, not null",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().List(gomock.Any(), authedID).Return(nil, nil)
			},
			checkResponse: wantJSONBody(http.StatusOK, `{"collections":[]}`),
		},
		{name: "without a token", headers: noHeaders, buildStubs: anonymousRefused, checkResponse: wantNoToken},
		{
			name: "a storage failure is a generic 500",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().List(gomock.Any(), authedID).Return(nil, errFolderStorage)
			},
			checkResponse: wantInternal,
		},
	})
}

// badIDs are path ids that name no folder: the answer is 404 without asking the service.
var badIDs = []struct{ name, id string }{
	{"a word", "abc"},
	{"zero", "0"},
	{"negative", "-3"},
	{"fractional", "1.5"},
	{"beyond int64", "99999999999999999999"},
	{"hex", "0x1f"},
}

func TestUpdateCollection(t *testing.T) {
	t.Parallel()
	renamed := later
	renamed.Name = "Soon"
	cases := []colCase{
		{
			name: "renamed",
			body: `{"collection":{"name":"Soon"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Update(gomock.Any(), authedID, int64(31), collectionInput(sp("Soon"), nil)).Return(renamed, nil)
			},
			checkResponse: wantJSONBody(http.StatusOK, `{"collection":`+strings.Replace(laterJSON, `"Later"`, `"Soon"`, 1)+`}`),
		},
		{
			name: "an empty description is sent as empty, not absent",
			body: `{"collection":{"description":""}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Update(gomock.Any(), authedID, int64(31), collectionInput(nil, sp(""))).Return(later, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{
			name: "someone else's folder",
			body: `{"collection":{"name":"Soon"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Update(gomock.Any(), authedID, int64(31), gomock.Any()).Return(domain.Collection{}, domain.ErrForbidden)
			},
			checkResponse: wantForbidden,
		},
		{
			name:   "an unknown folder",
			target: "/api/collections/99",
			body:   `{"collection":{"name":"Soon"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Update(gomock.Any(), authedID, int64(99), gomock.Any()).Return(domain.Collection{}, fmt.Errorf("get: %w", domain.ErrNotFound))
			},
			checkResponse: wantNotFound,
		},
		{
			name: "a taken name",
			body: `{"collection":{"name":"Taken"}}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Update(gomock.Any(), authedID, int64(31), gomock.Any()).Return(domain.Collection{}, domain.NewValidationError("name", "has already been taken"))
			},
			checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"name": {"has already been taken"}}),
		},
		{name: "malformed JSON", body: `{"collection":{"name":`, buildStubs: signedInButUntouched, checkResponse: wantInvalidJSON},
		{
			name: "a description that is not a string", body: `{"collection":{"description":["x"]}}`, buildStubs: signedInButUntouched,
			checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"description": {"must be a string"}}),
		},
		{name: "without a token", body: `{"collection":{"name":"x"}}`, headers: noHeaders, buildStubs: anonymousRefused, checkResponse: wantNoToken},
	}
	for _, bad := range badIDs {
		cases = append(cases, colCase{
			name: "id " + bad.name, target: "/api/collections/" + bad.id, body: `{"collection":{"name":"Soon"}}`,
			buildStubs: signedInButUntouched, checkResponse: wantNotFound,
		})
	}
	runColCases(t, http.MethodPatch, "/api/collections/31", cases)
}

func TestDeleteCollection(t *testing.T) {
	t.Parallel()
	cases := []colCase{
		{
			name: "deleted",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Delete(gomock.Any(), authedID, int64(31)).Return(nil)
			},
			checkResponse: requireNoContent,
		},
		{
			name: "someone else's folder",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Delete(gomock.Any(), authedID, int64(31)).Return(domain.ErrForbidden)
			},
			checkResponse: wantForbidden,
		},
		{
			name: "an unknown folder",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Delete(gomock.Any(), authedID, int64(31)).Return(fmt.Errorf("get: %w", domain.ErrNotFound))
			},
			checkResponse: wantNotFound,
		},
		{name: "without a token", headers: noHeaders, buildStubs: anonymousRefused, checkResponse: wantNoToken},
	}
	for _, bad := range badIDs {
		cases = append(cases, colCase{
			name: "id " + bad.name, target: "/api/collections/" + bad.id, buildStubs: signedInButUntouched, checkResponse: wantNotFound,
		})
	}
	runColCases(t, http.MethodDelete, "/api/collections/31", cases)
}

// collectedDragon is dragon as the viewer sees it once it is in one of their folders.
var (
	collectedDragon     = func() domain.ArticleView { v := dragon; v.Collected = true; v.Counters.Collects = 2; return v }()
	collectedDragonJSON = `{"article":` + one(strings.Replace(strings.Replace(dragonFields,
		`"collected":false`, `"collected":true`, 1), `"collectsCount":1`, `"collectsCount":2`, 1), dragon.Body) + `}`
)

func TestCollectArticle(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	mustBeNumber := wantErrors(http.StatusUnprocessableEntity, map[string][]string{"collectionId": {"must be a number"}})
	runColCases(t, http.MethodPost, "/api/articles/"+slug+"/collect", []colCase{
		{
			name: "collected",
			body: `{"collectionId":31}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Collect(gomock.Any(), authedID, slug, int64(31)).Return(collectedDragon, nil)
			},
			checkResponse: wantJSONBody(http.StatusOK, collectedDragonJSON),
		},
		{
			name: "a missing collectionId reaches the service as 0, which refuses it",
			body: `{}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Collect(gomock.Any(), authedID, slug, int64(0)).Return(domain.ArticleView{}, domain.NewValidationError("collectionId", "can't be blank"))
			},
			checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"collectionId": {"can't be blank"}}),
		},
		{
			name: "an unknown or hidden article",
			body: `{"collectionId":31}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Collect(gomock.Any(), authedID, slug, int64(31)).Return(domain.ArticleView{}, domain.ErrNotFound)
			},
			checkResponse: wantNotFound,
		},
		{
			name: "someone else's folder",
			body: `{"collectionId":31}`,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Collect(gomock.Any(), authedID, slug, int64(31)).Return(domain.ArticleView{}, domain.ErrForbidden)
			},
			checkResponse: wantForbidden,
		},
		{name: "collectionId as a string", body: `{"collectionId":"31"}`, buildStubs: signedInButUntouched, checkResponse: mustBeNumber},
		{name: "collectionId as a fraction", body: `{"collectionId":1.5}`, buildStubs: signedInButUntouched, checkResponse: mustBeNumber},
		{name: "collectionId beyond int64", body: `{"collectionId":99999999999999999999}`, buildStubs: signedInButUntouched, checkResponse: mustBeNumber},
		{name: "malformed JSON", body: `{"collectionId":`, buildStubs: signedInButUntouched, checkResponse: wantInvalidJSON},
		{name: "no body", buildStubs: signedInButUntouched, checkResponse: wantEmptyBody},
		{name: "without a token", body: `{"collectionId":31}`, headers: noHeaders, buildStubs: anonymousRefused, checkResponse: wantNoToken},
	})
}

func TestUncollectArticle(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	path := "/api/articles/" + slug + "/collect"
	uncollected := dragon
	uncollectedJSON := dragonJSON
	whole := wantErrors(http.StatusUnprocessableEntity, map[string][]string{"collectionId": {"must be a whole number"}})
	expectUncollect := func(id int64) func(b colBundle) {
		return func(b colBundle) {
			expectAuth(b.users)
			b.cols.EXPECT().Uncollect(gomock.Any(), authedID, slug, id).Return(uncollected, nil)
		}
	}
	runColCases(t, http.MethodDelete, path, []colCase{
		{name: "collectionId in the body", body: `{"collectionId":31}`, buildStubs: expectUncollect(31), checkResponse: wantJSONBody(http.StatusOK, uncollectedJSON)},
		{name: "collectionId in the query", target: path + "?collectionId=31", buildStubs: expectUncollect(31), checkResponse: wantJSONBody(http.StatusOK, uncollectedJSON)},
		{name: "the query wins over a body", target: path + "?collectionId=31", body: `{"collectionId":5}`, buildStubs: expectUncollect(31), checkResponse: wantJSONBody(http.StatusOK, uncollectedJSON)},
		{name: "an empty query value falls back to the body", target: path + "?collectionId=", body: `{"collectionId":5}`, buildStubs: expectUncollect(5), checkResponse: wantJSONBody(http.StatusOK, uncollectedJSON)},
		{name: "query collectionId abc", target: path + "?collectionId=abc", buildStubs: signedInButUntouched, checkResponse: whole},
		{name: "query collectionId fractional", target: path + "?collectionId=1.5", buildStubs: signedInButUntouched, checkResponse: whole},
		{name: "query collectionId beyond int64", target: path + "?collectionId=99999999999999999999", buildStubs: signedInButUntouched, checkResponse: whole},
		{
			name: "body collectionId as a string", body: `{"collectionId":"31"}`, buildStubs: signedInButUntouched,
			checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"collectionId": {"must be a number"}}),
		},
		{name: "neither body nor query", buildStubs: signedInButUntouched, checkResponse: wantEmptyBody},
		{name: "malformed JSON", body: `{`, buildStubs: signedInButUntouched, checkResponse: wantInvalidJSON},
		{
			name: "someone else's folder", target: path + "?collectionId=32",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Uncollect(gomock.Any(), authedID, slug, int64(32)).Return(domain.ArticleView{}, domain.ErrForbidden)
			},
			checkResponse: wantForbidden,
		},
		{name: "without a token", target: path + "?collectionId=31", headers: noHeaders, buildStubs: anonymousRefused, checkResponse: wantNoToken},
	})
}

// cursorOf is c as the API encodes it in nextCursor.
func cursorOf(c domain.Cursor) string {
	return base64URL(fmt.Sprintf("%d:%d", c.CreatedAt.UnixMicro(), c.ID))
}

// pagedList is a page of dragon and note, as a collection or the history returns it.
var (
	pageCursor = domain.Cursor{CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 654_321_000, time.UTC), ID: 2}
	pagedList  = service.ArticleList{Articles: []domain.ArticleView{dragon, note}, Total: 2, NextCursor: &pageCursor}
)

// pagedListCases are the paging cases shared by the folder list and the history. expect returns
// the service call for a page matcher.
func pagedListCases(expect func(b colBundle, page gomock.Matcher) *gomock.Call) []colCase {
	at := time.UnixMicro(1_767_225_600_123_456)
	sent := cursorOf(domain.Cursor{CreatedAt: at, ID: 42})
	return []colCase{
		{
			name: "a page of summaries and a cursor",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				expect(b, pageIs(domain.Page{Limit: domain.DefaultPageLimit})).Return(pagedList, nil)
			},
			checkResponse: wantJSONBody(http.StatusOK, listJSON(false, 2, cursorOf(pageCursor))),
		},
		{
			name: "the last page has no cursor",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				l := pagedList
				l.NextCursor = nil
				expect(b, gomock.Any()).Return(l, nil)
			},
			checkResponse: wantJSONBody(http.StatusOK, listJSON(false, 2, "")),
		},
		{
			name:   "limit and cursor reach the service",
			target: "?limit=2&cursor=" + sent,
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				expect(b, pageIs(domain.Page{Limit: 2, Cursor: &domain.Cursor{CreatedAt: at, ID: 42}})).Return(service.ArticleList{}, nil)
			},
			checkResponse: wantJSONBody(http.StatusOK, `{"articles":[],"articlesCount":0}`),
		},
		{name: "limit 0", target: "?limit=0", buildStubs: signedInButUntouched, checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"limit": {"must be between 1 and 100"}})},
		{name: "limit 101", target: "?limit=101", buildStubs: signedInButUntouched, checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"limit": {"must be between 1 and 100"}})},
		{name: "limit ten", target: "?limit=ten", buildStubs: signedInButUntouched, checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"limit": {"must be a whole number"}})},
		{name: "garbage cursor", target: "?cursor=bm90LWEtY3Vyc29y", buildStubs: signedInButUntouched, checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"cursor": {"is not a cursor this API returned"}})},
		{
			name: "bad limit and cursor together", target: "?limit=-1&cursor=x", buildStubs: signedInButUntouched,
			checkResponse: wantErrors(http.StatusUnprocessableEntity, map[string][]string{"limit": {"must be between 1 and 100"}, "cursor": {"is not a cursor this API returned"}}),
		},
		{name: "without a token", headers: noHeaders, buildStubs: anonymousRefused, checkResponse: wantNoToken},
		{name: "with a bad token", headers: badTokenHeader, buildStubs: badTokenRefused, checkResponse: wantBadToken},
	}
}

// withBase prefixes every case's target (a query string or empty) with base.
func withBase(base string, cases []colCase) []colCase {
	for i := range cases {
		cases[i].target = base + cases[i].target
	}
	return cases
}

func TestCollectionArticles(t *testing.T) {
	t.Parallel()
	cases := withBase("/api/collections/31/articles", pagedListCases(func(b colBundle, page gomock.Matcher) *gomock.Call {
		return b.cols.EXPECT().Articles(gomock.Any(), authedID, int64(31), page)
	}))
	cases = append(cases,
		colCase{
			name: "someone else's folder", target: "/api/collections/32/articles",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Articles(gomock.Any(), authedID, int64(32), gomock.Any()).Return(service.ArticleList{}, domain.ErrForbidden)
			},
			checkResponse: wantForbidden,
		},
		colCase{
			name: "an unknown folder", target: "/api/collections/99/articles",
			buildStubs: func(b colBundle) {
				expectAuth(b.users)
				b.cols.EXPECT().Articles(gomock.Any(), authedID, int64(99), gomock.Any()).Return(service.ArticleList{}, fmt.Errorf("get: %w", domain.ErrNotFound))
			},
			checkResponse: wantNotFound,
		},
	)
	for _, bad := range badIDs {
		cases = append(cases, colCase{
			name: "id " + bad.name, target: "/api/collections/" + bad.id + "/articles", buildStubs: signedInButUntouched, checkResponse: wantNotFound,
		})
	}
	runColCases(t, http.MethodGet, "", cases)
}

func TestHistory(t *testing.T) {
	t.Parallel()
	cases := withBase("/api/user/history", pagedListCases(func(b colBundle, page gomock.Matcher) *gomock.Call {
		return b.history.EXPECT().History(gomock.Any(), authedID, page)
	}))
	runColCases(t, http.MethodGet, "", cases)
}

// TestCollectionRoutesCursorRoundTrip: the nextCursor a page hands out, sent back, reaches the
// service as the same position, to the microsecond.
func TestCollectionRoutesCursorRoundTrip(t *testing.T) {
	t.Parallel()
	routes := []struct {
		name, path string
		expect     func(b colBundle, page gomock.Matcher) *gomock.Call
	}{
		{"collection", "/api/collections/31/articles", func(b colBundle, page gomock.Matcher) *gomock.Call {
			return b.cols.EXPECT().Articles(gomock.Any(), authedID, int64(31), page)
		}},
		{"history", "/api/user/history", func(b colBundle, page gomock.Matcher) *gomock.Call {
			return b.history.EXPECT().History(gomock.Any(), authedID, page)
		}},
	}
	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			b := setupCollections(t)
			last := &domain.Cursor{CreatedAt: time.Date(2026, 5, 6, 7, 8, 9, 123_456_789, time.FixedZone("PDT", -7*3600)), ID: 9001}
			b.users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil).Times(2)
			first := r.expect(b, pageIs(domain.Page{Limit: 1})).Return(service.ArticleList{Articles: []domain.ArticleView{dragon}, Total: 1, NextCursor: last}, nil)
			r.expect(b, pageIs(domain.Page{Limit: 1, Cursor: &domain.Cursor{CreatedAt: last.CreatedAt.Truncate(time.Microsecond), ID: 9001}})).
				Return(service.ArticleList{}, nil).After(first)

			rec := httptest.NewRecorder()
			b.router.ServeHTTP(rec, newRequest(http.MethodGet, r.path+"?limit=1", "", authHeader))
			requireStatus(t, rec, http.StatusOK)
			var page struct {
				NextCursor string `json:"nextCursor"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.NextCursor == "" {
				t.Fatalf("first page %s: no nextCursor (%v)", rec.Body, err)
			}
			rec = httptest.NewRecorder()
			b.router.ServeHTTP(rec, newRequest(http.MethodGet, r.path+"?limit=1&cursor="+page.NextCursor, "", authHeader))
			requireJSON(t, rec, http.StatusOK, `{"articles":[],"articlesCount":0}`)
		})
	}
}
