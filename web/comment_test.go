package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

var (
	// thanks is comment 1, the article's third, by celeb (followed by the viewer).
	thanks = domain.CommentView{
		Comment: domain.Comment{
			ID: 1, ArticleID: 1, Seq: 3, AuthorID: 9, Body: "Thank you so much!",
			CreatedAt: time.Date(2026, 2, 5, 10, 0, 0, 500_000_000, time.FixedZone("JST", 9*3600)),
			UpdatedAt: time.Date(2026, 2, 5, 1, 0, 0, 0, time.UTC),
		},
		Author: celebFollowed,
	}
	thanksJSON = `{"id":1,"seq":3,"createdAt":"2026-02-05T01:00:00.500Z","updatedAt":"2026-02-05T01:00:00.000Z",` +
		`"body":"Thank you so much!","author":` + celebProfileFollowed + `,"parentId":null,"repliesCount":0,"deleted":false,"edited":false}`
	// reply is comment 2, the fourth, by jake.
	reply = domain.CommentView{
		Comment: domain.Comment{
			ID: 2, ArticleID: 1, Seq: 4, AuthorID: authedID, Body: "You're welcome",
			CreatedAt: time.Date(2026, 2, 6, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2026, 2, 6, 0, 0, 0, 0, time.UTC),
		},
		Author: domain.Profile{Username: "jake", Bio: "I work at statefarm"},
	}
	replyJSON = `{"id":2,"seq":4,"createdAt":"2026-02-06T00:00:00.000Z","updatedAt":"2026-02-06T00:00:00.000Z",` +
		`"body":"You're welcome","author":{"username":"jake","bio":"I work at statefarm","image":"","following":false},"parentId":null,"repliesCount":0,"deleted":false,"edited":false}`
)

func TestAddComment(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	adds := func(body string, v domain.CommentView, err error) func(b bundle) {
		return func(b bundle) {
			expectAuth(b.users)
			b.comments.EXPECT().Add(gomock.Any(), authedID, slug, body, int64(0)).Return(v, err)
		}
	}
	neverAdds := func(b bundle) {
		expectAuth(b.users)
		b.comments.EXPECT().Add(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	bad := func(fields map[string][]string) func(t *testing.T, rec *httptest.ResponseRecorder) {
		return func(t *testing.T, rec *httptest.ResponseRecorder) {
			requireErrors(t, rec, http.StatusUnprocessableEntity, fields)
		}
	}

	runAPICases(t, http.MethodPost, "/api/articles/"+slug+"/comments", []apiCase{
		{
			name:       "added",
			body:       `{"comment":{"body":"Thank you so much!"}}`,
			headers:    authHeader,
			buildStubs: adds("Thank you so much!", thanks, nil),
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"comment":`+thanksJSON+`}`)
			},
		},
		{
			name:          "validation error from the service",
			body:          `{"comment":{"body":"  "}}`,
			headers:       authHeader,
			buildStubs:    adds("  ", domain.CommentView{}, domain.NewValidationError("body", "can't be blank")),
			checkResponse: bad(map[string][]string{"body": {"can't be blank"}}),
		},
		{
			name:          "a missing comment object reaches the service as an empty body",
			body:          `{}`,
			headers:       authHeader,
			buildStubs:    adds("", domain.CommentView{}, domain.NewValidationError("body", "can't be blank")),
			checkResponse: bad(map[string][]string{"body": {"can't be blank"}}),
		},
		{
			name:          "article not found",
			body:          `{"comment":{"body":"first!"}}`,
			headers:       authHeader,
			buildStubs:    adds("first!", domain.CommentView{}, fmt.Errorf("get: %w", domain.ErrNotFound)),
			checkResponse: requireNotFound,
		},
		{
			name:          "unexpected error",
			body:          `{"comment":{"body":"first!"}}`,
			headers:       authHeader,
			buildStubs:    adds("first!", domain.CommentView{}, errInternal),
			checkResponse: requireInternalError,
		},
		{name: "a number for the body", body: `{"comment":{"body":42}}`, headers: authHeader, buildStubs: neverAdds, checkResponse: bad(map[string][]string{"body": {"must be a string"}})},
		{name: "a list for the comment", body: `{"comment":["hi"]}`, headers: authHeader, buildStubs: neverAdds, checkResponse: bad(map[string][]string{"comment": {"must be a JSON object"}})},
		{name: "malformed JSON", body: `{"comment":{"body":"hi"}`, headers: authHeader, buildStubs: neverAdds, checkResponse: bad(map[string][]string{"body": {"is not valid JSON"}})},
		{name: "empty body", headers: authHeader, buildStubs: neverAdds, checkResponse: bad(map[string][]string{"body": {"request body is empty; send a JSON object"}})},
		{
			name: "missing token",
			body: `{"comment":{"body":"first!"}}`,
			buildStubs: func(b bundle) {
				noAuth(b)
				b.comments.EXPECT().Add(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
	})
}

func TestListComments(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	runAPICases(t, http.MethodGet, "/api/articles/"+slug+"/comments", []apiCase{
		{
			name: "anonymous reader gets every comment",
			buildStubs: func(b bundle) {
				noAuth(b)
				b.comments.EXPECT().List(gomock.Any(), int64(0), slug, int64(0), 1000).Return(service.CommentList{Comments: []domain.CommentView{thanks, reply}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"comments":[`+thanksJSON+`,`+replyJSON+`]}`)
			},
		},
		{
			name:    "signed-in reader, more comments follow",
			headers: authHeader,
			buildStubs: func(b bundle) {
				expectAuth(b.users)
				b.comments.EXPECT().List(gomock.Any(), authedID, slug, int64(0), 1000).Return(service.CommentList{Comments: []domain.CommentView{reply}, NextAfter: 7}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				// more follow: the cursor names the page's last stored comment
				requireJSON(t, rec, http.StatusOK, `{"comments":[`+replyJSON+`],"nextCursor":"`+base64URL("n:7")+`"}`)
			},
		},
		{
			name: "no comments is an empty list, not null",
			buildStubs: func(b bundle) {
				b.comments.EXPECT().List(gomock.Any(), int64(0), slug, int64(0), 1000).Return(service.CommentList{}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireJSON(t, rec, http.StatusOK, `{"comments":[]}`)
			},
		},
		{
			name: "article not found",
			buildStubs: func(b bundle) {
				b.comments.EXPECT().List(gomock.Any(), int64(0), slug, int64(0), 1000).Return(service.CommentList{}, domain.ErrNotFound)
			},
			checkResponse: requireNotFound,
		},
		{
			name:    "an invalid token is refused",
			headers: badTokenHeader,
			buildStubs: func(b bundle) {
				rejectsBadToken(b)
				b.comments.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireBadToken,
		},
	})
}

func TestDeleteComment(t *testing.T) {
	t.Parallel()
	const base = "/api/articles/how-to-train-your-dragon/comments/"
	deletes := func(id int64, err error) func(b bundle) {
		return func(b bundle) {
			expectAuth(b.users)
			b.comments.EXPECT().Delete(gomock.Any(), authedID, "how-to-train-your-dragon", id).Return(err)
		}
	}
	neverDeletes := func(b bundle) {
		expectAuth(b.users)
		b.comments.EXPECT().Delete(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}

	runAPICases(t, http.MethodDelete, base+"3", []apiCase{
		{name: "deleted", headers: authHeader, buildStubs: deletes(3, nil), checkResponse: requireNoContent},
		{name: "someone else's comment", headers: authHeader, buildStubs: deletes(3, domain.ErrForbidden), checkResponse: requireForbidden},
		{name: "not found (or on another article)", headers: authHeader, buildStubs: deletes(3, domain.ErrNotFound), checkResponse: requireNotFound},
		{name: "a large id", target: base + "9223372036854775807", headers: authHeader, buildStubs: deletes(1<<63-1, nil), checkResponse: requireNoContent},
		{name: "id abc", target: base + "abc", headers: authHeader, buildStubs: neverDeletes, checkResponse: requireNotFound},
		{name: "id 0", target: base + "0", headers: authHeader, buildStubs: neverDeletes, checkResponse: requireNotFound},
		{name: "negative id", target: base + "-3", headers: authHeader, buildStubs: neverDeletes, checkResponse: requireNotFound},
		{name: "id beyond int64", target: base + "9223372036854775808", headers: authHeader, buildStubs: neverDeletes, checkResponse: requireNotFound},
		{name: "fractional id", target: base + "1.5", headers: authHeader, buildStubs: neverDeletes, checkResponse: requireNotFound},
		{
			name: "missing token",
			buildStubs: func(b bundle) {
				noAuth(b)
				b.comments.EXPECT().Delete(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: requireMissingToken,
		},
	})
}
