package web_test

import (
	"encoding/json"
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

type revisionBundle struct {
	users *mocks.MockUserService
	revs  *mocks.MockRevisionService
}

type revisionCase struct {
	name          string
	method        string
	target        string
	body          string
	headers       map[string]string
	buildStubs    func(b revisionBundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runRevisionCases(t *testing.T, cases []revisionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			b := revisionBundle{users: mocks.NewMockUserService(ctrl), revs: mocks.NewMockRevisionService(ctrl)}
			tc.buildStubs(b)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
				Auth: web.NewAuthenticator(b.users, logger), Revisions: web.NewRevisionHandler(b.revs, logger),
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(tc.method, tc.target, tc.body, tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

var (
	revAt  = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	revTwo = domain.ArticleRevision{ArticleID: 1, Version: 2, Title: "Then", Description: "d", Body: "old", Tags: []string{"b", "a"}, CreatedAt: revAt}
)

// noRevisionCalls proves a bad request never reached the revision use cases.
func noRevisionCalls(b revisionBundle) {
	a := gomock.Any()
	b.revs.EXPECT().List(a, a, a, a, a).Times(0)
	b.revs.EXPECT().Get(a, a, a, a).Times(0)
	b.revs.EXPECT().Restore(a, a, a, a, a).Times(0)
}

func TestRevisionHandler_List(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	page := service.RevisionList{Revisions: []domain.ArticleRevision{revTwo, {Version: 1, Title: "First", Description: "d", CreatedAt: revAt}}, NextBefore: 1}
	bad := func(target string, field, msg string) revisionCase {
		return revisionCase{
			name: "422 " + target, method: http.MethodGet, target: target, headers: authHeader,
			buildStubs: func(b revisionBundle) { expectAuth(b.users); noRevisionCalls(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{field: {msg}})
			},
		}
	}
	runRevisionCases(t, []revisionCase{
		{
			name: "a page newest first, without bodies, with the next cursor", method: http.MethodGet, target: "/api/articles/kept/revisions?limit=2", headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().List(a, sessionCred, "kept", int32(0), 2).Return(page, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"revisions":[
					{"version":2,"title":"Then","description":"d","tagList":["a","b"],"createdAt":"2026-12-01T10:00:00.000Z"},
					{"version":1,"title":"First","description":"d","tagList":[],"createdAt":"2026-12-01T10:00:00.000Z"}],
					"nextCursor":"bjox"}`)
			},
		},
		{
			name: "the cursor pages on from the version it names", method: http.MethodGet, target: "/api/articles/kept/revisions?cursor=bjox", headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().List(a, sessionCred, "kept", int32(1), domain.DefaultPageLimit).Return(service.RevisionList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"revisions":[]}`)
			},
		},
		{
			name: "not the author nor a moderator is 403", method: http.MethodGet, target: "/api/articles/kept/revisions", headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().List(a, sessionCred, "kept", int32(0), domain.DefaultPageLimit).Return(service.RevisionList{}, domain.ErrForbidden)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusForbidden) },
		},
		{
			name: "signed out is 401", method: http.MethodGet, target: "/api/articles/kept/revisions",
			buildStubs:    noRevisionCalls,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
		bad("/api/articles/kept/revisions?limit=0", "limit", "must be between 1 and 100"),
		bad("/api/articles/kept/revisions?limit=x", "limit", "must be a whole number"),
		bad("/api/articles/kept/revisions?cursor=nope", "cursor", "is not a cursor this API returned"),
		// A (time, id) cursor of the article lists is not a revision cursor.
		bad("/api/articles/kept/revisions?cursor=MTc2NDU4MzIwMDAwMDAwMDox", "cursor", "is not a cursor this API returned"),
		// n:4294967296, past any version.
		bad("/api/articles/kept/revisions?cursor=bjo0Mjk0OTY3Mjk2", "cursor", "is not a cursor this API returned"),
		{
			// Refused at the edge, before the credential is read.
			name: "422 a NUL in the cursor", method: http.MethodGet, target: "/api/articles/kept/revisions?cursor=%00", headers: authHeader,
			buildStubs: noRevisionCalls,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"cursor": {"must be UTF-8 text without NUL characters"}})
			},
		},
	})
}

func TestRevisionHandler_Get(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	notFound := func(name, target string) revisionCase {
		return revisionCase{
			name: name, method: http.MethodGet, target: target, headers: authHeader,
			buildStubs: func(b revisionBundle) { expectAuth(b.users); noRevisionCalls(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusNotFound)
			},
		}
	}
	// A path no resource can have is refused at the edge, before the credential is read.
	pathRefused := func(name, target string) revisionCase {
		return revisionCase{
			name: name, method: http.MethodGet, target: target, headers: authHeader,
			buildStubs: noRevisionCalls,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusNotFound, map[string][]string{"path": {"not found"}})
			},
		}
	}
	runRevisionCases(t, []revisionCase{
		{
			name: "one version with its body", method: http.MethodGet, target: "/api/articles/kept/revisions/2", headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().Get(a, sessionCred, "kept", int32(2)).Return(revTwo, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"revision":{"version":2,"title":"Then","description":"d","body":"old","tagList":["a","b"],"createdAt":"2026-12-01T10:00:00.000Z"}}`)
			},
		},
		{
			name: "a version not kept is 404", method: http.MethodGet, target: "/api/articles/kept/revisions/9", headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().Get(a, sessionCred, "kept", int32(9)).Return(domain.ArticleRevision{}, domain.ErrNotFound)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusNotFound, map[string][]string{"body": {"not found"}})
			},
		},
		notFound("a version that is not a number is 404", "/api/articles/kept/revisions/two"),
		notFound("version 0 is 404", "/api/articles/kept/revisions/0"),
		notFound("a negative version is 404", "/api/articles/kept/revisions/-1"),
		notFound("a version past 32 bits is 404", "/api/articles/kept/revisions/2147483648"),
		pathRefused("a NUL in the version is 404", "/api/articles/kept/revisions/2%00"),
		pathRefused("invalid UTF-8 in the version is 404", "/api/articles/kept/revisions/%ff"),
	})
}

func TestRevisionHandler_Restore(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	restored := domain.ArticleView{Article: domain.Article{ID: 1, Slug: "kept", Title: "Then", Body: "old", Version: 5, Status: domain.StatusPublished}, Author: domain.Profile{Username: "writer"}}
	wantArticle := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		requireStatus(t, rec, http.StatusOK)
		var got struct {
			Article struct {
				Slug    string `json:"slug"`
				Title   string `json:"title"`
				Body    string `json:"body"`
				Version int32  `json:"version"`
			} `json:"article"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Article.Version != 5 || got.Article.Body != "old" || got.Article.Title != "Then" {
			t.Fatalf("body %s: %v", rec.Body, err)
		}
	}
	runRevisionCases(t, []revisionCase{
		{
			name: "without a body: no expected version", method: http.MethodPost, target: "/api/articles/kept/revisions/2/restore", headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().Restore(a, sessionCred, "kept", int32(2), (*int32)(nil)).Return(restored, nil)
			},
			checkResponse: wantArticle,
		},
		{
			name: "with the version last seen", method: http.MethodPost, target: "/api/articles/kept/revisions/2/restore", body: `{"version":4}`, headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().Restore(a, sessionCred, "kept", int32(2), gomock.Cond(func(v *int32) bool { return v != nil && *v == 4 })).Return(restored, nil)
			},
			checkResponse: wantArticle,
		},
		{
			name: "a stale version is 409", method: http.MethodPost, target: "/api/articles/kept/revisions/2/restore", body: `{"version":3}`, headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().Restore(a, sessionCred, "kept", int32(2), a).Return(domain.ArticleView{}, domain.ErrStaleVersion)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusConflict) },
		},
		{
			name: "a missing version is 404", method: http.MethodPost, target: "/api/articles/kept/revisions/9/restore", headers: authHeader,
			buildStubs: func(b revisionBundle) {
				expectAuth(b.users)
				b.revs.EXPECT().Restore(a, sessionCred, "kept", int32(9), a).Return(domain.ArticleView{}, domain.ErrNotFound)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotFound) },
		},
		{
			name: "a version that is not a number is 404", method: http.MethodPost, target: "/api/articles/kept/revisions/x/restore", headers: authHeader,
			buildStubs:    func(b revisionBundle) { expectAuth(b.users); noRevisionCalls(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotFound) },
		},
		{
			name: "a version of the wrong type is 422", method: http.MethodPost, target: "/api/articles/kept/revisions/2/restore", body: `{"version":"4"}`, headers: authHeader,
			buildStubs: func(b revisionBundle) { expectAuth(b.users); noRevisionCalls(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnprocessableEntity)
			},
		},
		{
			name: "a NUL escape in the body is 422", method: http.MethodPost, target: "/api/articles/kept/revisions/2/restore", body: `{"version":4,"x":"\u0000"}`, headers: authHeader,
			buildStubs: func(b revisionBundle) { expectAuth(b.users); noRevisionCalls(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnprocessableEntity)
			},
		},
		{
			name: "a body that is not UTF-8 is 422", method: http.MethodPost, target: "/api/articles/kept/revisions/2/restore", body: "{\"version\":4,\"x\":\"\xff\"}", headers: authHeader,
			buildStubs: func(b revisionBundle) { expectAuth(b.users); noRevisionCalls(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"body": {"must be UTF-8 text"}})
			},
		},
		{
			name: "signed out is 401", method: http.MethodPost, target: "/api/articles/kept/revisions/2/restore",
			buildStubs:    noRevisionCalls,
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
	})
}
