package web_test

import (
	"context"
	"io"
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

// safetyBundle is a router with the Idempotency-Key middleware and the rate limiter mounted, each
// behind a mock, plus the services the routes under test call.
type safetyBundle struct {
	users    *mocks.MockUserService
	articles *mocks.MockArticleService
	comments *mocks.MockCommentService
	limiter  *mocks.MockRateLimiter
	router   http.Handler
}

// setupSafety builds the router with limits (zero rules: no limiting).
func setupSafety(t *testing.T, limits web.RateLimits) safetyBundle {
	t.Helper()
	ctrl := gomock.NewController(t)
	logger := slog.New(slog.DiscardHandler)
	b := safetyBundle{
		users:    mocks.NewMockUserService(ctrl),
		articles: mocks.NewMockArticleService(ctrl),
		comments: mocks.NewMockCommentService(ctrl),
		limiter:  mocks.NewMockRateLimiter(ctrl),
	}
	b.router = web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes, RateLimits: limits}, logger, web.Handlers{
		Auth:        web.NewAuthenticator(b.users, logger),
		Users:       web.NewUserHandler(b.users, logger),
		Articles:    web.NewArticleHandler(b.articles, nil, logger),
		Comments:    web.NewCommentHandler(b.comments, logger),
		Idempotency: web.NewIdempotency(),
		Limiter:     b.limiter,
	})
	return b
}

func (b safetyBundle) do(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, req)
	return rec
}

type createFunc = func(ctx context.Context, viewerID int64, in service.CreateArticleInput, idem service.Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error)

// createsArticle is a use case with nothing stored under the key: it creates v (or fails with
// err), renders the outcome through the handler's Render, and reports the key and what was
// rendered to seen (when not nil).
func createsArticle(v domain.ArticleView, err error, seen func(k service.IdempotencyKey, res domain.StoredResponse)) createFunc {
	return func(_ context.Context, _ int64, _ service.CreateArticleInput, idem service.Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error) {
		res := idem.Render(v, err)
		if seen != nil {
			seen(idem.Key, res)
		}
		return res, false, nil
	}
}

// keyIs matches a service.Idempotent by its key's scope and key.
func keyIs[T any](scope, key string) gomock.Matcher {
	return gomock.Cond(func(x any) bool {
		idem, ok := x.(service.Idempotent[T])
		return ok && idem.Key.Scope == scope && idem.Key.Key == key && idem.Render != nil
	})
}

// safetyCase is one request through the safety middlewares: what is sent, the calls the mocks
// expect, and what the response must be.
type safetyCase struct {
	name          string
	method        string // default: the table's
	target        string // default: the table's
	body          string
	headers       map[string]string
	limits        web.RateLimits
	buildStubs    func(t *testing.T, b safetyBundle)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runSafetyCases(t *testing.T, method, target string, tests []safetyCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupSafety(t, tc.limits)
			tc.buildStubs(t, b)
			m, u := method, target
			if tc.method != "" {
				m = tc.method
			}
			if tc.target != "" {
				u = tc.target
			}
			tc.checkResponse(t, b.do(newRequest(m, u, tc.body, tc.headers)))
		})
	}
}

func with(h map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(h)+len(kv)/2)
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

var (
	idemArticleBody = `{"article":{"title":"Keyed","description":"d","body":"b"}}`
	idemArticleIn   = service.CreateArticleInput{Title: "Keyed", Description: "d", Body: "b"}
	keyed           = domain.ArticleView{
		Article: domain.Article{ID: 5, Slug: "keyed", AuthorID: authedID, Title: "Keyed", Description: "d", Body: "b",
			Status: domain.StatusPublished, Version: 1,
			CreatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		Author: domain.Profile{Username: "jake"},
	}
	storedArticle = domain.StoredResponse{Status: http.StatusCreated, Body: []byte(`{"article":{"slug":"stored-earlier"}}`)}
)

func requireNotReplayed(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if h := rec.Header().Get("Idempotent-Replayed"); h != "" {
		t.Errorf("Idempotent-Replayed = %q on a response that was not replayed", h)
	}
}

func requireSlug(t *testing.T, rec *httptest.ResponseRecorder, status int, slug string) {
	t.Helper()
	requireStatus(t, rec, status)
	if !strings.Contains(rec.Body.String(), `"slug":"`+slug+`"`) {
		t.Fatalf("body %s lacks slug %q", rec.Body, slug)
	}
}

func TestIdempotencyKeyMiddleware(t *testing.T) {
	t.Parallel()
	key := with(authHeader, "Idempotency-Key", "key-1")
	neverRuns := func(b safetyBundle) {
		b.articles.EXPECT().CreateIdempotent(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	anyIdem := func(b safetyBundle) *gomock.Call {
		return b.articles.EXPECT().CreateIdempotent(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any())
	}

	runSafetyCases(t, http.MethodPost, "/api/articles", []safetyCase{
		{
			name:    "without a key the request runs as usual",
			body:    idemArticleBody,
			headers: authHeader,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).Times(0)
				b.articles.EXPECT().Create(gomock.Any(), authedID, idemArticleIn).Return(keyed, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireSlug(t, rec, http.StatusCreated, "keyed")
				requireNotReplayed(t, rec)
			},
		},
		{
			name:    "a key goes to the use case, scoped to the user, and the answer is what it rendered to store",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				b.articles.EXPECT().CreateIdempotent(gomock.Any(), authedID, idemArticleIn, keyIs[domain.ArticleView]("user:7", "key-1")).DoAndReturn(
					createsArticle(keyed, nil, func(k service.IdempotencyKey, res domain.StoredResponse) {
						if len(k.RequestHash) != 64 {
							t.Errorf("hash %q is not a hex SHA-256", k.RequestHash)
						}
						if res.Status != http.StatusCreated || !strings.Contains(string(res.Body), `"slug":"keyed"`) {
							t.Errorf("the handler rendered %d %s to store", res.Status, res.Body)
						}
					}))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireSlug(t, rec, http.StatusCreated, "keyed")
				requireNotReplayed(t, rec)
				if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type = %q", ct)
				}
			},
		},
		{
			name:    "a replay answers the stored bytes and says so",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				b.articles.EXPECT().CreateIdempotent(gomock.Any(), authedID, idemArticleIn, keyIs[domain.ArticleView]("user:7", "key-1")).Return(storedArticle, true, nil)
				b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusCreated)
				if got := rec.Body.String(); got != string(storedArticle.Body) {
					t.Fatalf("body = %s, want the stored bytes %s", got, storedArticle.Body)
				}
				if h := rec.Header().Get("Idempotent-Replayed"); h != "true" {
					t.Fatalf("Idempotent-Replayed = %q, want true", h)
				}
				if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type = %q", ct)
				}
			},
		},
		{
			name:    "a replayed 204 has no body",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).Return(domain.StoredResponse{Status: http.StatusNoContent}, true, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusNoContent)
				if rec.Body.Len() != 0 || rec.Header().Get("Idempotent-Replayed") != "true" {
					t.Fatalf("204 replay: body %q, header %q", rec.Body, rec.Header().Get("Idempotent-Replayed"))
				}
			},
		},
		{
			name:    "the key while the first request is still running: 409",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).Return(domain.StoredResponse{}, false, domain.ErrIdempotencyInFlight)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusConflict, map[string][]string{
					"Idempotency-Key": {"a request with this key is still being processed; retry later"}})
				requireNotReplayed(t, rec)
			},
		},
		{
			name:    "the key with a different request: 422",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).Return(domain.StoredResponse{}, false, domain.ErrIdempotencyMismatch)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{
					"Idempotency-Key": {"was already used for a different request"}})
			},
		},
		{
			name:    "the store failing is a generic 500",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).Return(domain.StoredResponse{}, false, errInternal)
			},
			checkResponse: requireInternalError,
		},
		{
			name:       "a key that is not UTF-8: 400, the use case never called",
			body:       idemArticleBody,
			headers:    with(authHeader, "Idempotency-Key", "k\xff"),
			buildStubs: func(t *testing.T, b safetyBundle) { expectAuth(b.users); neverRuns(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusBadRequest, map[string][]string{"Idempotency-Key": {"must be UTF-8 text without NUL characters"}})
			},
		},
		{
			name:       "a key longer than 255 characters: 400, the use case never called",
			body:       idemArticleBody,
			headers:    with(authHeader, "Idempotency-Key", strings.Repeat("k", 256)),
			buildStubs: func(t *testing.T, b safetyBundle) { expectAuth(b.users); neverRuns(b) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusBadRequest, map[string][]string{"Idempotency-Key": {"must be at most 255 characters"}})
			},
		},
		{
			name:    "a key of exactly 255 characters is accepted",
			body:    idemArticleBody,
			headers: with(authHeader, "Idempotency-Key", strings.Repeat("k", 255)),
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				b.articles.EXPECT().CreateIdempotent(gomock.Any(), authedID, idemArticleIn, keyIs[domain.ArticleView]("user:7", strings.Repeat("k", 255))).
					DoAndReturn(createsArticle(keyed, nil, nil))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireSlug(t, rec, http.StatusCreated, "keyed") },
		},
		{
			name:    "without a token the key is never looked at: 401",
			body:    idemArticleBody,
			headers: map[string]string{"Idempotency-Key": "key-1"},
			buildStubs: func(t *testing.T, b safetyBundle) {
				b.users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Times(0)
				neverRuns(b)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusUnauthorized) },
		},
		{
			name:    "a rejection is rendered to be stored, and is what the client gets",
			body:    `{"article":{"title":"","description":"d","body":"b"}}`,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).DoAndReturn(createsArticle(domain.ArticleView{}, domain.NewValidationError("title", "can't be blank"),
					func(_ service.IdempotencyKey, res domain.StoredResponse) {
						if res.Status != http.StatusUnprocessableEntity || string(res.Body) != `{"errors":{"title":["can't be blank"]}}` {
							t.Errorf("the handler rendered %d %s to store", res.Status, res.Body)
						}
					}))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"title": {"can't be blank"}})
			},
		},
		{
			name:    "an internal error is rendered as the generic 500, its text kept from the client",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).DoAndReturn(createsArticle(domain.ArticleView{}, errInternal, nil))
			},
			checkResponse: requireInternalError,
		},
		{
			name:    "a panic under a key still reaches the client as a 500",
			body:    idemArticleBody,
			headers: key,
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				anyIdem(b).DoAndReturn(func(context.Context, int64, service.CreateArticleInput, service.Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error) {
					panic("pq: secret internal detail")
				})
			},
			checkResponse: requireInternalError,
		},
	})
}

func TestIdempotencyKeyScopes(t *testing.T) {
	t.Parallel()
	regBody := `{"user":{"username":"jake","email":"jake@jake.jake","password":"jakejakejake"}}`
	regIn := service.RegisterInput{Username: "jake", Email: "jake@jake.jake", Password: "jakejakejake"}
	runSafetyCases(t, http.MethodPost, "", []safetyCase{
		{
			name:    "registration is scoped by client IP",
			target:  "/api/users",
			body:    regBody,
			headers: map[string]string{"Idempotency-Key": "reg-1"},
			buildStubs: func(t *testing.T, b safetyBundle) {
				b.users.EXPECT().Register(gomock.Any(), gomock.Any()).Times(0)
				b.users.EXPECT().RegisterIdempotent(gomock.Any(), regIn, keyIs[service.Session]("ip:192.0.2.1", "reg-1")).DoAndReturn(
					func(_ context.Context, _ service.RegisterInput, idem service.Idempotent[service.Session]) (domain.StoredResponse, bool, error) {
						return idem.Render(service.Session{User: domain.User{ID: 7, Username: "jake", Email: "jake@jake.jake"}, Token: "T", Refresh: "R"}, nil), false, nil
					})
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusCreated,
					`{"user":{"email":"jake@jake.jake","token":"T","username":"jake","bio":"","image":"","refreshToken":"R"}}`)
			},
		},
		{
			name:    "registration does not trust X-Forwarded-For from an untrusted peer",
			target:  "/api/users",
			body:    regBody,
			headers: map[string]string{"Idempotency-Key": "reg-1", "X-Forwarded-For": "203.0.113.9"},
			buildStubs: func(t *testing.T, b safetyBundle) {
				b.users.EXPECT().RegisterIdempotent(gomock.Any(), regIn, keyIs[service.Session]("ip:192.0.2.1", "reg-1")).Return(storedArticle, true, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusCreated) },
		},
		{
			name:    "comments are scoped by user and replay",
			target:  "/api/articles/keyed/comments",
			body:    `{"comment":{"body":"first"}}`,
			headers: with(authHeader, "Idempotency-Key", "c-1"),
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				b.comments.EXPECT().AddIdempotent(gomock.Any(), authedID, "keyed", "first", int64(0), keyIs[domain.CommentView]("user:7", "c-1")).
					Return(domain.StoredResponse{Status: 200, Body: []byte(`{"comment":{"id":1}}`)}, true, nil)
				b.comments.EXPECT().Add(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"comment":{"id":1}}`)
				if rec.Header().Get("Idempotent-Replayed") != "true" {
					t.Fatal("no Idempotent-Replayed header")
				}
			},
		},
		{
			name:    "routes without idempotency ignore the header",
			method:  http.MethodPut,
			target:  "/api/articles/keyed",
			body:    `{"article":{"body":"x"}}`,
			headers: with(authHeader, "Idempotency-Key", "ignored"),
			buildStubs: func(t *testing.T, b safetyBundle) {
				expectAuth(b.users)
				b.articles.EXPECT().Update(gomock.Any(), authedID, "keyed", gomock.Any()).Return(keyed, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireSlug(t, rec, http.StatusOK, "keyed") },
		},
	})
}

func TestIdempotencyKeyOversizeBody(t *testing.T) {
	t.Parallel()
	b := setupSafety(t, web.RateLimits{})
	expectAuth(b.users)
	b.articles.EXPECT().CreateIdempotent(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	// No Content-Length: the limit is only found while reading.
	req := newRequest(http.MethodPost, "/api/articles", "", with(authHeader, "Idempotency-Key", "big"))
	req.Body = io.NopCloser(strings.NewReader(`{"article":{"body":"` + strings.Repeat("b", maxBodyBytes) + `"}}`))
	req.ContentLength = -1
	requireErrors(t, b.do(req), http.StatusRequestEntityTooLarge, map[string][]string{"body": {"request body is too large"}})
}

// TestIdempotencyRequestHash checks the fingerprint the store compares: the same JSON however it
// is encoded hashes the same; another body, route, method or path does not.
func TestIdempotencyRequestHash(t *testing.T) {
	t.Parallel()
	hashOf := func(t *testing.T, method, target, body string) string {
		t.Helper()
		b := setupSafety(t, web.RateLimits{})
		b.users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil).AnyTimes()
		var hash string
		b.articles.EXPECT().CreateIdempotent(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(_ context.Context, _ int64, _ service.CreateArticleInput, idem service.Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error) {
				hash = idem.Key.RequestHash
				return storedArticle, true, nil
			}).AnyTimes()
		b.comments.EXPECT().AddIdempotent(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(_ context.Context, _ int64, _, _ string, _ int64, idem service.Idempotent[domain.CommentView]) (domain.StoredResponse, bool, error) {
				hash = idem.Key.RequestHash
				return storedArticle, true, nil
			}).AnyTimes()
		requireStatus(t, b.do(newRequest(method, target, body, with(authHeader, "Idempotency-Key", "h"))), storedArticle.Status)
		return hash
	}
	const base = `{"article":{"title":"T","description":"D","body":"B","tagList":["a","b"],"n":1.50}}`
	tests := []struct {
		name           string
		method, target string
		body           string
		same           bool
	}{
		{"identical", "POST", "/api/articles", base, true},
		{"keys in another order, other whitespace", "POST", "/api/articles",
			"{\n  \"article\" : {\"n\": 1.50, \"tagList\": [ \"a\", \"b\" ],\t\"body\":\"B\",\"description\":\"D\", \"title\":\"T\"}\n}\n", true},
		{"another value", "POST", "/api/articles", strings.Replace(base, `"B"`, `"C"`, 1), false},
		{"array order matters", "POST", "/api/articles", strings.Replace(base, `["a","b"]`, `["b","a"]`, 1), false},
		{"another route", "POST", "/api/articles/t/comments", base, false},
		{"the same route on another article", "POST", "/api/articles/other/comments", base, false},
	}
	want := hashOf(t, "POST", "/api/articles", base)
	comments := hashOf(t, "POST", "/api/articles/t/comments", base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := hashOf(t, tc.method, tc.target, tc.body)
			ref := want
			if tc.name == "the same route on another article" {
				ref = comments // /api/articles/t/comments vs /api/articles/other/comments
			}
			if (got == ref) != tc.same {
				t.Fatalf("hash %s vs %s: same = %v, want %v", got, ref, got == ref, tc.same)
			}
		})
	}
}
