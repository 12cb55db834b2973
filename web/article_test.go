package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// apiCase is one request to an article or comment route: what is sent, the service calls it must
// (or must never) make, and what the response must be.
type apiCase struct {
	name          string
	target        string // overrides the table's default target when set
	body          string
	headers       map[string]string
	buildStubs    func(b bundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

// runAPICases serves each case as method target, each in its own parallel subtest with fresh mocks.
func runAPICases(t *testing.T, method, target string, tests []apiCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tc.buildStubs(b)
			u := target
			if tc.target != "" {
				u = tc.target
			}
			tc.checkResponse(t, b.do(newRequest(method, u, tc.body, tc.headers)))
		})
	}
}

// publicListsCarryBodies records the current contract of GET /api/articles and /feed: like every
// list, their items are summaries without a body (the current RealWorld spec dropped it).
const publicListsCarryBodies = false

var (
	// dragon is a published article by celeb, whom the viewer follows and whose article they like.
	// Its CreatedAt is in another zone with sub-millisecond digits: responses show UTC milliseconds.
	dragon = domain.ArticleView{
		Article: domain.Article{
			ID: 1, Slug: "how-to-train-your-dragon", AuthorID: 9, Title: "How to train your dragon",
			Description: "Ever wonder how?", Body: "It takes a Jacobian", BodyHTML: "<p>It takes a Jacobian</p>", Tags: []string{"dragons", "training"},
			Status: domain.StatusPublished, Version: 2,
			CreatedAt: time.Date(2026, 2, 3, 4, 5, 6, 789_654_321, time.FixedZone("CET", 3600)),
			UpdatedAt: time.Date(2026, 2, 4, 0, 0, 0, 0, time.UTC),
		},
		Author:    celebFollowed,
		Counters:  domain.Counters{Reads: 10, Likes: 3, Collects: 1},
		Favorited: true,
	}
	dragonFields = `"slug":"how-to-train-your-dragon","title":"How to train your dragon","description":"Ever wonder how?",` +
		`"tagList":["dragons","training"],"createdAt":"2026-02-03T03:05:06.789Z","updatedAt":"2026-02-04T00:00:00.000Z",` +
		`"favorited":true,"favoritesCount":3,"author":` + celebProfileFollowed + `,` +
		`"status":"published","version":2,"readsCount":10,"collected":false,"collectsCount":1`

	// note is jake's draft without tags: tagList must still be a list.
	note = domain.ArticleView{
		Article: domain.Article{
			ID: 2, Slug: "note", AuthorID: authedID, Title: "Note", Description: "d", Body: "draft body", BodyHTML: "<p>draft body</p>",
			Status: domain.StatusDraft, Version: 1,
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		},
		Author: domain.Profile{Username: "jake", Bio: "I work at statefarm"},
	}
	noteFields = `"slug":"note","title":"Note","description":"d","tagList":[],"createdAt":"2026-01-02T03:04:05.000Z",` +
		`"updatedAt":"2026-01-02T03:04:05.000Z","favorited":false,"favoritesCount":0,` +
		`"author":{"username":"jake","bio":"I work at statefarm","image":"","following":false},` +
		`"status":"draft","version":1,"readsCount":0,"collected":false,"collectsCount":0`
)

const celebProfileFollowed = `{"username":"celeb","bio":"famous","image":"https://example.com/celeb.png","following":true}`

// one renders an article's JSON object from its fields and, when body is not "", its body and
// its HTML (the fixtures' HTML is the body in a paragraph).
func one(fields, body string) string {
	if body == "" {
		return "{" + fields + "}"
	}
	b, _ := json.Marshal(body)
	h, _ := json.Marshal("<p>" + body + "</p>")
	return "{" + fields + `,"body":` + string(b) + `,"bodyHtml":` + string(h) + "}"
}

var (
	dragonJSON = `{"article":` + one(dragonFields, dragon.Body) + `}`
	noteJSON   = `{"article":` + one(noteFields, note.Body) + `}`
)

// listJSON renders a list response of dragon and note with count n and, when set, a cursor.
func listJSON(withBodies bool, n int, cursor string) string {
	dragonBody, noteBody := "", ""
	if withBodies {
		dragonBody, noteBody = dragon.Body, note.Body
	}
	out := `{"articles":[` + one(dragonFields, dragonBody) + `,` + one(noteFields, noteBody) + `],"articlesCount":` + strconv.Itoa(n)
	if cursor != "" {
		out += `,"nextCursor":"` + cursor + `"`
	}
	return out + "}"
}

// requireBodyKeys fails unless every item of a list response has (or lacks) the "body" key.
func requireBodyKeys(t *testing.T, rec *httptest.ResponseRecorder, want bool) {
	t.Helper()
	var got struct {
		Articles []map[string]json.RawMessage `json:"articles"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("list body %s: %v", rec.Body, err)
	}
	for i, a := range got.Articles {
		if _, ok := a["body"]; ok != want {
			t.Errorf("articles[%d] has a body key: %v, want %v", i, ok, want)
		}
	}
}

// requireNoContent fails unless the response is 204 with nothing in the body.
func requireNoContent(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireStatus(t, rec, http.StatusNoContent)
	if rec.Body.Len() != 0 {
		t.Errorf("204 with body %q, want none", rec.Body)
	}
}

func requireForbidden(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireErrors(t, rec, http.StatusForbidden, map[string][]string{"body": {"you are not allowed to do this"}})
}

func requireBadToken(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireErrors(t, rec, http.StatusUnauthorized, map[string][]string{"token": {"is missing, invalid or expired"}})
}

func requireStale(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireErrors(t, rec, http.StatusConflict, map[string][]string{
		"version": {"is stale: the article was changed meanwhile; reload it and apply your edit again"},
	})
}

func requireIllegalTransition(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	requireErrors(t, rec, http.StatusConflict, map[string][]string{
		"status": {"does not allow this: publish works on drafts, withdrawn and scheduled articles, withdraw on published and scheduled ones, schedule on all but published ones, unschedule on scheduled ones"},
	})
}

// noAuth proves a request without an Authorization header was refused without a token check.
func noAuth(b bundle) { b.users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0) }

// rejectsBadToken makes users.Authenticate refuse "Token BAD".
var badTokenHeader = map[string]string{"Authorization": "Token BAD"}

func rejectsBadToken(b bundle) {
	b.users.EXPECT().Authenticate(gomock.Any(), "BAD").Return(domain.Credential{}, domain.ErrUnauthorized)
}

func TestCreateArticle(t *testing.T) {
	t.Parallel()
	const body = `{"article":{"title":"How to train your dragon","description":"Ever wonder how?","body":"It takes a Jacobian","tagList":["dragons","training"]}}`
	in := service.CreateArticleInput{
		Title: "How to train your dragon", Description: "Ever wonder how?", Body: "It takes a Jacobian", Tags: []string{"dragons", "training"},
	}
	neverCreates := func(b bundle) {
		expectAuth(b.users)
		b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	badInput := func(fields map[string][]string) func(t *testing.T, rec *httptest.ResponseRecorder) {
		return func(t *testing.T, rec *httptest.ResponseRecorder) {
			t.Helper()
			requireErrors(t, rec, http.StatusUnprocessableEntity, fields)
		}
	}

	runAPICases(t, http.MethodPost, "/api/articles", []apiCase{
		{
			name:    "created",
			body:    body,
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Create(gomock.Any(), authedID, in).Return(dragon, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated, dragonJSON)
			},
		},
		{
			name:    "draft flag reaches the service",
			body:    `{"article":{"title":"Note","description":"d","body":"draft body","draft":true}}`,
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Create(gomock.Any(), authedID, service.CreateArticleInput{Title: "Note", Description: "d", Body: "draft body", Draft: true}).
					Return(note, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated, noteJSON)
			},
		},
		{
			name:    "validation error from the service",
			body:    `{"article":{"title":"","description":"","body":""}}`,
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				verr := domain.NewValidationError("title", "can't be blank")
				verr.Add("body", "can't be blank")
				b.articles.EXPECT().Create(gomock.Any(), authedID, service.CreateArticleInput{}).Return(domain.ArticleView{}, verr)
			},
			checkResponse: badInput(map[string][]string{"title": {"can't be blank"}, "body": {"can't be blank"}}),
		},
		{
			name: "missing token",
			body: body,
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
		{
			name:          "malformed JSON",
			body:          `{"article":{"title":`,
			headers:       authHeader,
			buildStubs:    neverCreates,
			checkResponse: badInput(map[string][]string{"body": {"is not valid JSON"}}),
		},
		{
			name:          "empty body",
			headers:       authHeader,
			buildStubs:    neverCreates,
			checkResponse: badInput(map[string][]string{"body": {"request body is empty; send a JSON object"}}),
		},
		{
			name:          "a string for tagList",
			body:          `{"article":{"title":"t","description":"d","body":"b","tagList":"dragons"}}`,
			headers:       authHeader,
			buildStubs:    neverCreates,
			checkResponse: badInput(map[string][]string{"tagList": {"must be a list"}}),
		},
		{
			name:          "a number for the title",
			body:          `{"article":{"title":5,"description":"d","body":"b"}}`,
			headers:       authHeader,
			buildStubs:    neverCreates,
			checkResponse: badInput(map[string][]string{"title": {"must be a string"}}),
		},
		{
			name:          "a string for draft",
			body:          `{"article":{"title":"t","description":"d","body":"b","draft":"yes"}}`,
			headers:       authHeader,
			buildStubs:    neverCreates,
			checkResponse: badInput(map[string][]string{"draft": {"must be a boolean"}}),
		},
		{
			name:          "numbers in tagList",
			body:          `{"article":{"title":"t","description":"d","body":"b","tagList":[1,2]}}`,
			headers:       authHeader,
			buildStubs:    neverCreates,
			checkResponse: badInput(map[string][]string{"tagList": {"must be a string"}}),
		},
		{
			name:          "a string for the article object",
			body:          `{"article":"How to train your dragon"}`,
			headers:       authHeader,
			buildStubs:    neverCreates,
			checkResponse: badInput(map[string][]string{"article": {"must be a JSON object"}}),
		},
		{
			name:    "the author's account vanished",
			body:    body,
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Create(gomock.Any(), authedID, in).Return(domain.ArticleView{}, domain.ErrUnauthorized)
			},
			checkResponse: requireBadToken,
		},
		{
			name:    "unexpected service error is a generic 500",
			body:    body,
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Create(gomock.Any(), authedID, in).Return(domain.ArticleView{}, fmt.Errorf("create: %w", errInternal))
			},
			checkResponse: requireInternalError,
		},
	})
}

func TestGetArticle(t *testing.T) {
	t.Parallel()
	runAPICases(t, http.MethodGet, "/api/articles/how-to-train-your-dragon", []apiCase{
		{
			name: "anonymous reader",
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().Get(gomock.Any(), int64(0), "how-to-train-your-dragon").Return(dragon, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, dragonJSON)
			},
		},
		{
			name:    "signed-in reader",
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Get(gomock.Any(), authedID, "how-to-train-your-dragon").Return(dragon, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, dragonJSON)
			},
		},
		{
			name:   "a percent-encoded unicode slug reaches the service decoded",
			target: "/api/articles/%D1%87%D0%B0%D0%B9-%E6%97%A5%E6%9C%AC",
			buildStubs: func(b bundle) {
				b.articles.EXPECT().Get(gomock.Any(), int64(0), "чай-日本").Return(dragon, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, dragonJSON)
			},
		},
		{
			name: "not found (or someone else's draft)",
			buildStubs: func(b bundle) {
				b.articles.EXPECT().Get(gomock.Any(), int64(0), "how-to-train-your-dragon").Return(domain.ArticleView{}, fmt.Errorf("get: %w", domain.ErrNotFound))
			},
			checkResponse: requireNotFound,
		},
		{
			name:    "an invalid token is refused, not treated as anonymous",
			headers: badTokenHeader,
			buildStubs: func(b bundle) {
				rejectsBadToken(b)
				b.articles.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireBadToken,
		},
	})
}

func TestUpdateArticle(t *testing.T) {
	t.Parallel()
	const target = "/api/articles/how-to-train-your-dragon"
	neverUpdates := func(b bundle) {
		expectAuth(b.users)
		b.articles.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	updates := func(in service.UpdateArticleInput, v domain.ArticleView, err error) func(b bundle) {
		return func(b bundle) {
			expectAuth(b.users)
			b.articles.EXPECT().Update(gomock.Any(), authedID, "how-to-train-your-dragon", in).Return(v, err)
		}
	}
	okDragon := func(t *testing.T, rec *httptest.ResponseRecorder) { requireJSON(t, rec, http.StatusOK, dragonJSON) }
	badInput := func(fields map[string][]string) func(t *testing.T, rec *httptest.ResponseRecorder) {
		return func(t *testing.T, rec *httptest.ResponseRecorder) {
			t.Helper()
			requireErrors(t, rec, http.StatusUnprocessableEntity, fields)
		}
	}
	title := "How to train your dragon"
	version := int32(3)

	runAPICases(t, http.MethodPut, target, []apiCase{
		{
			name:          "only the given fields reach the service",
			body:          `{"article":{"title":"How to train your dragon","version":3}}`,
			headers:       authHeader,
			buildStubs:    updates(service.UpdateArticleInput{Title: &title, Version: &version}, dragon, nil),
			checkResponse: okDragon,
		},
		{
			name:    "every field, an empty tag list and empty strings are passed as given",
			body:    `{"article":{"title":"T","description":"","body":"B","tagList":[]}}`,
			headers: authHeader,
			buildStubs: updates(service.UpdateArticleInput{
				Title: ptrTo("T"), Description: ptrTo(""), Body: ptrTo("B"), Tags: ptrTo([]string{}),
			}, dragon, nil),
			checkResponse: okDragon,
		},
		{
			name:          "an empty article object changes nothing",
			body:          `{"article":{}}`,
			headers:       authHeader,
			buildStubs:    updates(service.UpdateArticleInput{}, dragon, nil),
			checkResponse: okDragon,
		},
		{
			name:          "stale version",
			body:          `{"article":{"title":"How to train your dragon","version":3}}`,
			headers:       authHeader,
			buildStubs:    updates(service.UpdateArticleInput{Title: &title, Version: &version}, domain.ArticleView{}, fmt.Errorf("%w: got 3, the article is at version 4", domain.ErrStaleVersion)),
			checkResponse: requireStale,
		},
		{
			name:          "someone else's article",
			body:          `{"article":{"title":"How to train your dragon"}}`,
			headers:       authHeader,
			buildStubs:    updates(service.UpdateArticleInput{Title: &title}, domain.ArticleView{}, domain.ErrForbidden),
			checkResponse: requireForbidden,
		},
		{
			name:          "not found",
			body:          `{"article":{"title":"How to train your dragon"}}`,
			headers:       authHeader,
			buildStubs:    updates(service.UpdateArticleInput{Title: &title}, domain.ArticleView{}, domain.ErrNotFound),
			checkResponse: requireNotFound,
		},
		{
			name:          "validation error from the service",
			body:          `{"article":{"title":""}}`,
			headers:       authHeader,
			buildStubs:    updates(service.UpdateArticleInput{Title: ptrTo("")}, domain.ArticleView{}, domain.NewValidationError("title", "can't be blank")),
			checkResponse: badInput(map[string][]string{"title": {"can't be blank"}}),
		},
		{
			name:          "a string for version",
			body:          `{"article":{"title":"t","version":"3"}}`,
			headers:       authHeader,
			buildStubs:    neverUpdates,
			checkResponse: badInput(map[string][]string{"version": {"must be a number"}}),
		},
		{
			name:          "a version beyond int32",
			body:          `{"article":{"version":1099511627776}}`,
			headers:       authHeader,
			buildStubs:    neverUpdates,
			checkResponse: badInput(map[string][]string{"version": {"must be a number"}}),
		},
		{
			name:          "a fractional version",
			body:          `{"article":{"version":3.5}}`,
			headers:       authHeader,
			buildStubs:    neverUpdates,
			checkResponse: badInput(map[string][]string{"version": {"must be a number"}}),
		},
		{
			name:          "an object for tagList",
			body:          `{"article":{"tagList":{"a":1}}}`,
			headers:       authHeader,
			buildStubs:    neverUpdates,
			checkResponse: badInput(map[string][]string{"tagList": {"must be a list"}}),
		},
		{
			name:          "a boolean for the body",
			body:          `{"article":{"body":true}}`,
			headers:       authHeader,
			buildStubs:    neverUpdates,
			checkResponse: badInput(map[string][]string{"body": {"must be a string"}}),
		},
		{
			name:          "malformed JSON",
			body:          `{"article":`,
			headers:       authHeader,
			buildStubs:    neverUpdates,
			checkResponse: badInput(map[string][]string{"body": {"is not valid JSON"}}),
		},
		{
			name: "missing token",
			body: `{"article":{"title":"t"}}`,
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
	})
}

func ptrTo[T any](v T) *T { return &v }

func TestDeleteArticle(t *testing.T) {
	t.Parallel()
	deletes := func(err error) func(b bundle) {
		return func(b bundle) {
			expectAuth(b.users)
			b.articles.EXPECT().Delete(gomock.Any(), authedID, "how-to-train-your-dragon").Return(err)
		}
	}
	runAPICases(t, http.MethodDelete, "/api/articles/how-to-train-your-dragon", []apiCase{
		{name: "deleted", headers: authHeader, buildStubs: deletes(nil), checkResponse: requireNoContent},
		{name: "someone else's article", headers: authHeader, buildStubs: deletes(domain.ErrForbidden), checkResponse: requireForbidden},
		{name: "not found", headers: authHeader, buildStubs: deletes(fmt.Errorf("get: %w", domain.ErrNotFound)), checkResponse: requireNotFound},
		{name: "unexpected error", headers: authHeader, buildStubs: deletes(errInternal), checkResponse: requireInternalError},
		{
			name: "missing token",
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().Delete(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
	})
}

// TestArticleActions covers the routes that act on one article and answer with it: publish,
// withdraw, favorite and unfavorite.
func TestArticleActions(t *testing.T) {
	t.Parallel()
	routes := []struct {
		name   string
		method string
		path   string
		expect func(b bundle, viewer any, slug any) *gomock.Call
	}{
		{name: "publish", method: http.MethodPost, path: "/publish", expect: func(b bundle, v, s any) *gomock.Call {
			return b.articles.EXPECT().Publish(gomock.Any(), v, s)
		}},
		{name: "withdraw", method: http.MethodPost, path: "/withdraw", expect: func(b bundle, v, s any) *gomock.Call {
			return b.articles.EXPECT().Withdraw(gomock.Any(), v, s)
		}},
		{name: "favorite", method: http.MethodPost, path: "/favorite", expect: func(b bundle, v, s any) *gomock.Call {
			return b.articles.EXPECT().Favorite(gomock.Any(), v, s)
		}},
		{name: "unfavorite", method: http.MethodDelete, path: "/favorite", expect: func(b bundle, v, s any) *gomock.Call {
			return b.articles.EXPECT().Unfavorite(gomock.Any(), v, s)
		}},
	}
	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			answers := func(v domain.ArticleView, err error) func(b bundle) {
				return func(b bundle) {
					expectAuth(b.users)
					r.expect(b, authedID, "how-to-train-your-dragon").Return(v, err)
				}
			}
			cases := []apiCase{
				{
					name: "ok", headers: authHeader, buildStubs: answers(dragon, nil),
					checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireJSON(t, rec, http.StatusOK, dragonJSON) },
				},
				{name: "someone else's article", headers: authHeader, buildStubs: answers(domain.ArticleView{}, domain.ErrForbidden), checkResponse: requireForbidden},
				{name: "not found", headers: authHeader, buildStubs: answers(domain.ArticleView{}, domain.ErrNotFound), checkResponse: requireNotFound},
				{
					name: "missing token",
					buildStubs: func(b bundle) {
						noAuth(b)
						r.expect(b, gomock.Any(), gomock.Any()).Times(0)
					},
					checkResponse: requireMissingToken,
				},
				{
					name: "invalid token", headers: badTokenHeader,
					buildStubs: func(b bundle) {
						rejectsBadToken(b)
						r.expect(b, gomock.Any(), gomock.Any()).Times(0)
					},
					checkResponse: requireBadToken,
				},
			}
			if r.name == "publish" || r.name == "withdraw" {
				cases = append(cases, apiCase{
					name: "illegal transition", headers: authHeader,
					buildStubs:    answers(domain.ArticleView{}, fmt.Errorf("%w: article 1 cannot move", domain.ErrIllegalTransition)),
					checkResponse: requireIllegalTransition,
				})
			}
			runAPICases(t, r.method, "/api/articles/how-to-train-your-dragon"+r.path, cases)
		})
	}
}

func TestListArticles(t *testing.T) {
	t.Parallel()
	twoArticles := service.ArticleList{Articles: []domain.ArticleView{dragon, note}, Total: 2}
	cursor := &domain.Cursor{CreatedAt: time.UnixMicro(1_767_225_600_123_456), ID: 42}
	wantCursor := base64URL("1767225600123456:42")

	runAPICases(t, http.MethodGet, "/api/articles", []apiCase{
		{
			name: "anonymous, default paging, no cursor key without a next page",
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().List(gomock.Any(), int64(0), service.ListInput{Page: domain.Page{Limit: 20}}).Return(twoArticles, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, listJSON(publicListsCarryBodies, 2, ""))
				requireBodyKeys(t, rec, publicListsCarryBodies)
				if strings.Contains(rec.Body.String(), "nextCursor") {
					t.Errorf("body %s has nextCursor without a next page", rec.Body)
				}
			},
		},
		{
			name:   "filters and paging reach the service",
			target: "/api/articles?tag=dragons&author=celeb&favorited=jake&limit=10&offset=30",
			buildStubs: func(b bundle) {
				b.articles.EXPECT().List(gomock.Any(), int64(0), service.ListInput{
					Tag: "dragons", Author: "celeb", Favorited: "jake", Page: domain.Page{Limit: 10, Offset: 30},
				}).Return(service.ArticleList{Articles: []domain.ArticleView{dragon, note}, Total: 57, NextCursor: cursor}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, listJSON(publicListsCarryBodies, 57, wantCursor))
			},
		},
		{
			name:    "signed-in reader",
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().List(gomock.Any(), authedID, service.ListInput{Page: domain.Page{Limit: 20}}).Return(twoArticles, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, listJSON(publicListsCarryBodies, 2, ""))
			},
		},
		{
			name: "an empty list is [] with count 0",
			buildStubs: func(b bundle) {
				b.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(service.ArticleList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"articles":[],"articlesCount":0}`)
			},
		},
		{
			name: "unexpected service error",
			buildStubs: func(b bundle) {
				b.articles.EXPECT().List(gomock.Any(), int64(0), gomock.Any()).Return(service.ArticleList{}, errInternal)
			},
			checkResponse: requireInternalError,
		},
		{
			name:    "an invalid token is refused",
			headers: badTokenHeader,
			buildStubs: func(b bundle) {
				rejectsBadToken(b)
				b.articles.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireBadToken,
		},
	})
}

func TestFeed(t *testing.T) {
	t.Parallel()
	runAPICases(t, http.MethodGet, "/api/articles/feed", []apiCase{
		{
			name:    "the signed-in reader's feed",
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Feed(gomock.Any(), authedID, domain.Page{Limit: 20}).
					Return(service.ArticleList{Articles: []domain.ArticleView{dragon, note}, Total: 2}, nil)
				b.articles.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).Times(0) // "feed" is not a slug
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, listJSON(publicListsCarryBodies, 2, ""))
				requireBodyKeys(t, rec, publicListsCarryBodies)
			},
		},
		{
			name:    "paging reaches the service",
			target:  "/api/articles/feed?limit=5&offset=10",
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Feed(gomock.Any(), authedID, domain.Page{Limit: 5, Offset: 10}).Return(service.ArticleList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"articles":[],"articlesCount":0}`)
			},
		},
		{
			name: "missing token",
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().Feed(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
	})
}

func TestMyArticles(t *testing.T) {
	t.Parallel()
	both := service.ArticleList{Articles: []domain.ArticleView{dragon, note}, Total: 2}
	mine := func(status domain.ArticleStatus, p domain.Page) func(b bundle) {
		return func(b bundle) {
			expectAuth(b.users)
			b.articles.EXPECT().Mine(gomock.Any(), authedID, status, p).Return(both, nil)
		}
	}
	summaries := func(t *testing.T, rec *httptest.ResponseRecorder) {
		requireJSON(t, rec, http.StatusOK, listJSON(false, 2, ""))
		requireBodyKeys(t, rec, false)
	}
	neverLists := func(b bundle) {
		expectAuth(b.users)
		b.articles.EXPECT().Mine(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	badStatus := func(t *testing.T, rec *httptest.ResponseRecorder) {
		requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"status": {"must be draft, published, scheduled or withdrawn"}})
	}

	runAPICases(t, http.MethodGet, "/api/user/articles", []apiCase{
		{name: "every status, summaries only", headers: authHeader, buildStubs: mine("", domain.Page{Limit: 20}), checkResponse: summaries},
		{name: "drafts", target: "/api/user/articles?status=draft", headers: authHeader, buildStubs: mine(domain.StatusDraft, domain.Page{Limit: 20}), checkResponse: summaries},
		{name: "published", target: "/api/user/articles?status=published", headers: authHeader, buildStubs: mine(domain.StatusPublished, domain.Page{Limit: 20}), checkResponse: summaries},
		{
			name: "withdrawn, with paging", target: "/api/user/articles?status=withdrawn&limit=3&offset=6", headers: authHeader,
			buildStubs: mine(domain.StatusWithdrawn, domain.Page{Limit: 3, Offset: 6}), checkResponse: summaries,
		},
		{name: "an empty status means every status", target: "/api/user/articles?status=", headers: authHeader, buildStubs: mine("", domain.Page{Limit: 20}), checkResponse: summaries},
		{name: "unknown status", target: "/api/user/articles?status=bogus", headers: authHeader, buildStubs: neverLists, checkResponse: badStatus},
		{name: "status names are case-sensitive", target: "/api/user/articles?status=DRAFT", headers: authHeader, buildStubs: neverLists, checkResponse: badStatus},
		{
			name: "missing token",
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().Mine(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
	})
}

func TestTags(t *testing.T) {
	t.Parallel()
	runAPICases(t, http.MethodGet, "/api/tags", []apiCase{
		{
			name:       "tags in the service's order",
			buildStubs: func(b bundle) { b.articles.EXPECT().Tags(gomock.Any()).Return([]string{"rust", "go", "dragons"}, nil) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":["rust","go","dragons"]}`)
			},
		},
		{
			name:       "no tags is an empty list, not null",
			buildStubs: func(b bundle) { b.articles.EXPECT().Tags(gomock.Any()).Return(nil, nil) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":[]}`)
			},
		},
		{
			name:    "the route is public: a token is not even checked",
			headers: badTokenHeader,
			buildStubs: func(b bundle) {
				noAuth(b)
				b.articles.EXPECT().Tags(gomock.Any()).Return([]string{"go"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"tags":["go"]}`)
			},
		},
		{
			name:          "unexpected error",
			buildStubs:    func(b bundle) { b.articles.EXPECT().Tags(gomock.Any()).Return(nil, errInternal) },
			checkResponse: requireInternalError,
		},
	})
}
