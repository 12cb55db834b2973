package web_test

import (
	"net/http"
	"testing"

	"go.uber.org/mock/gomock"
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
}
