package web_test

import (
	"context"
	"net/http"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// PostgreSQL text holds neither NUL nor invalid UTF-8: a path, query parameter or JSON body
// carrying one is a 422 naming it (the Idempotency-Key header: TestIdempotency's table), and never reaches a
// service (where the database would answer it with a 500).
func TestPlainText_NULAndInvalidUTF8AreRefusedBeforeAnyService(t *testing.T) {
	t.Parallel()
	const msg = "must be UTF-8 text without NUL characters"
	cases := []struct {
		name, method, target, body string
		headers                    map[string]string
		status                     int
		field, message             string
	}{
		{"tag with NUL", "GET", "/api/articles?tag=%00", "", nil, http.StatusUnprocessableEntity, "tag", msg},
		{"tag not UTF-8", "GET", "/api/articles?tag=%ff", "", nil, http.StatusUnprocessableEntity, "tag", msg},
		{"author not UTF-8", "GET", "/api/articles?author=%c3%28", "", nil, http.StatusUnprocessableEntity, "author", msg},
		{"favorited with NUL", "GET", "/api/articles?favorited=a%00b", "", nil, http.StatusUnprocessableEntity, "favorited", msg},
		{"parameter name not UTF-8", "GET", "/api/articles?%ff=1", "", nil, http.StatusUnprocessableEntity, "query", msg},
		{"slug with NUL", "GET", "/api/articles/a%00b", "", nil, http.StatusUnprocessableEntity, "path", msg},
		{"username not UTF-8", "GET", "/api/profiles/%ff", "", nil, http.StatusUnprocessableEntity, "path", msg},
		{"comments of a slug not UTF-8", "GET", "/api/articles/%ff/comments", "", nil, http.StatusUnprocessableEntity, "path", msg},
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
