package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// Threaded comments (issue #32): replies, edits, ?parent= pages; bad input never reaches the
// service.
func TestAddCommentReply(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	answered := reply
	answered.ParentID, answered.RootID, answered.Depth = 1, 1, 2
	neverAdds := func(b bundle) {
		expectAuth(b.users)
		b.comments.EXPECT().Add(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	unprocessable := func(t *testing.T, rec *httptest.ResponseRecorder) {
		requireStatus(t, rec, http.StatusUnprocessableEntity)
	}
	runAPICases(t, http.MethodPost, "/api/articles/"+slug+"/comments", []apiCase{
		{
			name:    "a reply names its parent",
			body:    `{"comment":{"body":"You're welcome","parentId":1}}`,
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.comments.EXPECT().Add(gomock.Any(), authedID, slug, "You're welcome", int64(1)).Return(answered, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"comment":{"id":2,"seq":4,"createdAt":"2026-02-06T00:00:00.000Z","updatedAt":"2026-02-06T00:00:00.000Z",`+
					`"body":"You're welcome","author":{"username":"jake","bio":"I work at statefarm","image":"","following":false},"parentId":1,"repliesCount":0,"deleted":false,"edited":false}}`)
			},
		},
		{
			name:    "a null parentId is a top-level comment",
			body:    `{"comment":{"body":"hi","parentId":null}}`,
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.comments.EXPECT().Add(gomock.Any(), authedID, slug, "hi", int64(0)).Return(reply, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusOK) },
		},
		{
			name: "the service's parentId refusal", body: `{"comment":{"body":"x","parentId":7}}`, headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.comments.EXPECT().Add(gomock.Any(), authedID, slug, "x", int64(7)).Return(domain.CommentView{}, domain.NewValidationError("parentId", "is a comment of another article"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireErrors(t, rec, http.StatusUnprocessableEntity, map[string][]string{"parentId": {"is a comment of another article"}})
			},
		},
		{name: "a zero parentId", body: `{"comment":{"body":"x","parentId":0}}`, headers: authHeader, buildStubs: neverAdds, checkResponse: unprocessable},
		{name: "a negative parentId", body: `{"comment":{"body":"x","parentId":-3}}`, headers: authHeader, buildStubs: neverAdds, checkResponse: unprocessable},
		{name: "a string parentId", body: `{"comment":{"body":"x","parentId":"1"}}`, headers: authHeader, buildStubs: neverAdds, checkResponse: unprocessable},
		{name: "a fractional parentId", body: `{"comment":{"body":"x","parentId":1.5}}`, headers: authHeader, buildStubs: neverAdds, checkResponse: unprocessable},
		{name: "NUL in the body", body: `{"comment":{"body":"a\u0000b","parentId":1}}`, headers: authHeader, buildStubs: neverAdds, checkResponse: unprocessable},
		{name: "invalid UTF-8", body: "{\"comment\":{\"body\":\"a\xffb\",\"parentId\":1}}", headers: authHeader, buildStubs: neverAdds, checkResponse: unprocessable},
	})
}

func TestEditComment(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	edited := reply
	edited.Body, edited.Edited = "better", true
	edits := func(id int64, body string, v domain.CommentView, err error) func(b bundle) {
		return func(b bundle) {
			expectAuth(b.users)
			b.comments.EXPECT().Edit(gomock.Any(), authedID, slug, id, body).Return(v, err)
		}
	}
	neverEdits := func(b bundle) {
		expectAuth(b.users)
		b.comments.EXPECT().Edit(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	status := func(code int) func(t *testing.T, rec *httptest.ResponseRecorder) {
		return func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, code) }
	}
	for _, tc := range []struct {
		name, path, body string
		buildStubs       func(b bundle)
		check            func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "edited", path: "/2", body: `{"comment":{"body":"better"}}`, buildStubs: edits(2, "better", edited, nil),
			check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"comment":{"id":2,"seq":4,"createdAt":"2026-02-06T00:00:00.000Z","updatedAt":"2026-02-06T00:00:00.000Z",`+
					`"body":"better","author":{"username":"jake","bio":"I work at statefarm","image":"","following":false},"parentId":null,"repliesCount":0,"deleted":false,"edited":true}}`)
			},
		},
		{name: "someone else's comment", path: "/2", body: `{"comment":{"body":"x"}}`, buildStubs: edits(2, "x", domain.CommentView{}, domain.ErrForbidden), check: status(http.StatusForbidden)},
		{name: "missing or a placeholder", path: "/3", body: `{"comment":{"body":"x"}}`, buildStubs: edits(3, "x", domain.CommentView{}, domain.ErrNotFound), check: status(http.StatusNotFound)},
		{name: "blank body from the service", path: "/2", body: `{"comment":{"body":" "}}`, buildStubs: edits(2, " ", domain.CommentView{}, domain.NewValidationError("body", "can't be blank")), check: status(http.StatusUnprocessableEntity)},
		{name: "not an id", path: "/x", body: `{"comment":{"body":"x"}}`, buildStubs: neverEdits, check: status(http.StatusNotFound)},
		{name: "NUL", path: "/2", body: `{"comment":{"body":"a\u0000"}}`, buildStubs: neverEdits, check: status(http.StatusUnprocessableEntity)},
		{name: "invalid UTF-8", path: "/2", body: "{\"comment\":{\"body\":\"\xc3\x28\"}}", buildStubs: neverEdits, check: status(http.StatusUnprocessableEntity)},
		{name: "malformed JSON", path: "/2", body: `{"comment":`, buildStubs: neverEdits, check: status(http.StatusUnprocessableEntity)},
	} {
		runAPICases(t, http.MethodPut, "/api/articles/"+slug+"/comments"+tc.path, []apiCase{
			{name: tc.name, body: tc.body, headers: authHeader, buildStubs: tc.buildStubs, checkResponse: tc.check},
		})
	}
	runAPICases(t, http.MethodPut, "/api/articles/"+slug+"/comments/2", []apiCase{{
		name: "missing token", body: `{"comment":{"body":"x"}}`,
		buildStubs: func(b bundle) {
			noAuth(b)
			b.comments.EXPECT().Edit(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		},
		checkResponse: requireMissingToken,
	}})
}

func TestListCommentReplies(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	placeholder := domain.CommentView{Comment: domain.Comment{ID: 5, ArticleID: 1, Seq: 6, ParentID: 1, RootID: 1, Depth: 2, RepliesCount: 2, Deleted: true,
		CreatedAt: reply.CreatedAt, UpdatedAt: reply.UpdatedAt}}
	neverLists := func(b bundle) {
		noAuth(b)
		b.comments.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		b.comments.EXPECT().Replies(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	unprocessable := func(t *testing.T, rec *httptest.ResponseRecorder) {
		requireStatus(t, rec, http.StatusUnprocessableEntity)
	}
	base := "/api/articles/" + slug + "/comments"
	runAPICases(t, http.MethodGet, base+"?parent=1&limit=1", []apiCase{{
		name: "one comment's replies; a placeholder has no author",
		buildStubs: func(b bundle) {
			noAuth(b)
			b.comments.EXPECT().Replies(gomock.Any(), int64(0), slug, int64(1), int64(0), 1).Return(service.CommentList{Comments: []domain.CommentView{placeholder}, NextAfter: 5}, nil)
		},
		checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
			requireJSON(t, rec, http.StatusOK, `{"comments":[{"id":5,"seq":6,"createdAt":"2026-02-06T00:00:00.000Z","updatedAt":"2026-02-06T00:00:00.000Z",`+
				`"body":"","author":{"username":"","bio":"","image":"","following":false},"parentId":1,"repliesCount":2,"deleted":true,"edited":false}],"nextCursor":"bjo1"}`)
		},
	}})
	runAPICases(t, http.MethodGet, base+"?parent=1&cursor=bjo1", []apiCase{{
		name: "the next page after the cursor",
		buildStubs: func(b bundle) {
			noAuth(b)
			b.comments.EXPECT().Replies(gomock.Any(), int64(0), slug, int64(1), int64(5), 1000).Return(service.CommentList{}, nil)
		},
		checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
			requireJSON(t, rec, http.StatusOK, `{"comments":[]}`)
		},
	}})
	for _, q := range []string{"?parent=0", "?parent=-1", "?parent=x", "?parent=1&cursor=nope"} {
		runAPICases(t, http.MethodGet, base+q, []apiCase{{name: q, buildStubs: neverLists, checkResponse: unprocessable}})
	}
}
