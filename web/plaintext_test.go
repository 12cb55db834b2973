package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// PostgreSQL text holds neither NUL nor invalid UTF-8, and a request carrying one never reaches a
// service (where the database would answer it with an error): a path is a 404 (it names nothing),
// a query parameter or JSON body a 422 naming it (the Idempotency-Key header: TestIdempotency's
// table), and a name filter of a list an empty list (TestPlainText_UnstorableFilterIsAnEmptyList).
func TestPlainText_NULAndInvalidUTF8AreRefusedBeforeAnyService(t *testing.T) {
	t.Parallel()
	const msg = "must be UTF-8 text without NUL characters"
	cases := []struct {
		name, method, target, body string
		headers                    map[string]string
		status                     int
		field, message             string
	}{
		{"limit with NUL", "GET", "/api/articles?limit=%00", "", nil, http.StatusUnprocessableEntity, "limit", msg},
		{"parameter name not UTF-8", "GET", "/api/articles?%ff=1", "", nil, http.StatusUnprocessableEntity, "query", msg},
		{"slug with NUL", "GET", "/api/articles/a%00b", "", nil, http.StatusNotFound, "path", "not found"},
		{"username not UTF-8", "GET", "/api/profiles/%ff", "", nil, http.StatusNotFound, "path", "not found"},
		{"comments of a slug not UTF-8", "GET", "/api/articles/%ff/comments", "", nil, http.StatusNotFound, "path", "not found"},
		{"favorite of a slug with NUL", "POST", "/api/articles/a%00b/favorite", "", authHeader, http.StatusNotFound, "path", "not found"},
		{"JSON body with a NUL escape", "POST", "/api/articles", `{"article":{"title":"a\u0000b","description":"d","body":"b"}}`,
			authHeader, http.StatusUnprocessableEntity, "body", `must not contain NUL characters (\u0000)`},
		{"JSON body with a raw NUL byte", "POST", "/api/articles", "{\"article\":{\"title\":\"a\x00b\",\"description\":\"d\",\"body\":\"b\"}}",
			authHeader, http.StatusUnprocessableEntity, "body", "is not valid JSON"},
		{"JSON body not UTF-8", "POST", "/api/articles", "{\"article\":{\"title\":\"a\xffb\",\"description\":\"d\",\"body\":\"b\"}}",
			authHeader, http.StatusUnprocessableEntity, "body", "must be UTF-8 text"},
		{"JSON body with an overlong encoding", "POST", "/api/articles", "{\"article\":{\"title\":\"a\xc0\xafb\",\"description\":\"d\",\"body\":\"b\"}}",
			authHeader, http.StatusUnprocessableEntity, "body", "must be UTF-8 text"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.users.EXPECT().Authenticate(gomock.Any(), gomock.Any()).Return(sessionCred, nil).AnyTimes()
			b.articles.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			b.articles.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			b.articles.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			b.profiles.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			b.comments.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			b.articles.EXPECT().Favorite(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			rec := b.do(newRequest(tc.method, tc.target, tc.body, tc.headers))
			requireErrors(t, rec, tc.status, map[string][]string{tc.field: {tc.message}})
		})
	}

	t.Run("an escaped backslash before u0000 is text, not a NUL", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		expectAuth(b.users)
		b.articles.EXPECT().Create(gomock.Any(), authedID, gomock.Any()).Return(dragon, nil)
		rec := b.do(newRequest("POST", "/api/articles", `{"article":{"title":"a\\u0000b","description":"d","body":"b"}}`, authHeader))
		requireStatus(t, rec, http.StatusCreated)
	})

	// A lone surrogate escape is valid JSON text that names no character; encoding/json reads it
	// as U+FFFD (RFC 8259 leaves the meaning open), which PostgreSQL stores. Accepted, as documented.
	t.Run("a lone surrogate escape becomes U+FFFD", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		expectAuth(b.users)
		b.articles.EXPECT().Create(gomock.Any(), authedID, gomock.Any()).DoAndReturn(
			func(_ context.Context, _ int64, in service.CreateArticleInput) (domain.ArticleView, error) {
				if in.Title != "a\uFFFDb" {
					t.Errorf("title %q, want %q", in.Title, "a\uFFFDb")
				}
				return dragon, nil
			})
		rec := b.do(newRequest("POST", "/api/articles", `{"article":{"title":"a\ud800b","description":"d","body":"b"}}`, authHeader))
		requireStatus(t, rec, http.StatusCreated)
	})
}

// A tag, author or liker's username that PostgreSQL cannot store names nothing: the list is
// empty, as for any unknown name, and no service is asked.
func TestPlainText_UnstorableFilterIsAnEmptyList(t *testing.T) {
	t.Parallel()
	for _, target := range []string{
		"/api/articles?tag=%00",
		"/api/articles?tag=%ff",
		"/api/articles?author=%c3%28",
		"/api/articles?favorited=a%00b",
		"/api/articles?tag=ok&author=a%ed%a0%80b",
	} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.articles.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			rec := b.do(newRequest("GET", target, "", nil))
			requireStatus(t, rec, http.StatusOK)
			requireEmptyList(t, rec)
		})
	}
}

// requireEmptyList asserts a list answer with no articles and articlesCount 0.
func requireEmptyList(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var got struct {
		Articles      []any `json:"articles"`
		ArticlesCount *int  `json:"articlesCount"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Articles == nil || len(got.Articles) != 0 || got.ArticlesCount == nil || *got.ArticlesCount != 0 {
		t.Errorf("body %s, want an empty list with articlesCount 0", rec.Body)
	}
}
