package web_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// base64URL is a cursor as the API makes them: unpadded URL-safe base64 of s.
func base64URL(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// pageIs matches a domain.Page equal to want, comparing cursor times as instants (to the
// nanosecond, so a time that lost or gained precision does not match).
type pageIs domain.Page

func (w pageIs) Matches(x any) bool {
	p, ok := x.(domain.Page)
	if !ok || p.Limit != w.Limit || p.Offset != w.Offset || (p.Cursor == nil) != (w.Cursor == nil) {
		return false
	}
	return p.Cursor == nil || (p.Cursor.ID == w.Cursor.ID && p.Cursor.CreatedAt.Equal(w.Cursor.CreatedAt))
}

func (w pageIs) String() string {
	if w.Cursor == nil {
		return fmt.Sprintf("page limit %d offset %d, no cursor", w.Limit, w.Offset)
	}
	return fmt.Sprintf("page limit %d offset %d, cursor (%s, %d)", w.Limit, w.Offset, w.Cursor.CreatedAt.Format(time.RFC3339Nano), w.Cursor.ID)
}

// listInputWithPage matches a service.ListInput without filters whose page is want.
func listInputWithPage(want domain.Page) gomock.Matcher {
	return gomock.Cond(func(in service.ListInput) bool {
		return in.Tag == "" && in.Author == "" && in.Favorited == "" && pageIs(want).Matches(in.Page)
	})
}

// pagedRoute is a list route that reads limit, offset and cursor.
type pagedRoute struct {
	name    string
	path    string
	headers map[string]string
	auth    func(b bundle)                        // what the authenticator must be asked
	expect  func(b bundle, page any) *gomock.Call // the route's service call with the page it must receive
}

var pagedRoutes = []pagedRoute{
	{
		name: "articles", path: "/api/articles", auth: noAuth,
		expect: func(b bundle, page any) *gomock.Call {
			m, ok := page.(pageIs)
			if !ok {
				return b.articles.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any())
			}
			return b.articles.EXPECT().List(gomock.Any(), int64(0), listInputWithPage(domain.Page(m)))
		},
	},
	{
		name: "feed", path: "/api/articles/feed", headers: authHeader, auth: func(b bundle) { expectAuth(b.users) },
		expect: func(b bundle, page any) *gomock.Call {
			return b.articles.EXPECT().Feed(gomock.Any(), gomock.Any(), page)
		},
	},
	{
		name: "mine", path: "/api/user/articles", headers: authHeader, auth: func(b bundle) { expectAuth(b.users) },
		expect: func(b bundle, page any) *gomock.Call {
			return b.articles.EXPECT().Mine(gomock.Any(), gomock.Any(), gomock.Any(), page)
		},
	},
}

// TestPagingRejectsBadParams sends each bad paging parameter to each list route: the answer is
// 422 naming the parameter, and the service is never called.
func TestPagingRejectsBadParams(t *testing.T) {
	t.Parallel()
	const (
		limitRange  = "must be between 1 and 100"
		offsetRange = "must be between 0 and 100000"
		whole       = "must be a whole number"
		notCursor   = "is not a cursor this API returned"
	)
	tests := []struct {
		name  string
		query string
		want  map[string][]string
	}{
		{name: "limit 0", query: "limit=0", want: map[string][]string{"limit": {limitRange}}},
		{name: "limit 101", query: "limit=101", want: map[string][]string{"limit": {limitRange}}},
		{name: "negative limit", query: "limit=-1", want: map[string][]string{"limit": {limitRange}}},
		{name: "limit abc", query: "limit=abc", want: map[string][]string{"limit": {whole}}},
		{name: "fractional limit", query: "limit=1.5", want: map[string][]string{"limit": {whole}}},
		{name: "limit beyond int64", query: "limit=99999999999999999999", want: map[string][]string{"limit": {whole}}},
		{name: "offset -1", query: "offset=-1", want: map[string][]string{"offset": {offsetRange}}},
		{name: "offset past the maximum", query: "offset=100001", want: map[string][]string{"offset": {offsetRange}}},
		{name: "offset abc", query: "offset=abc", want: map[string][]string{"offset": {whole}}},
		{name: "cursor garbage", query: "cursor=" + url.QueryEscape("!!garbage!!"), want: map[string][]string{"cursor": {notCursor}}},
		{name: "cursor without a separator", query: "cursor=" + base64URL("1767225600123456"), want: map[string][]string{"cursor": {notCursor}}},
		{name: "cursor with a word for the time", query: "cursor=" + base64URL("yesterday:42"), want: map[string][]string{"cursor": {notCursor}}},
		{name: "cursor with a word for the id", query: "cursor=" + base64URL("1767225600123456:x"), want: map[string][]string{"cursor": {notCursor}}},
		{name: "cursor with id 0", query: "cursor=" + base64URL("1767225600123456:0"), want: map[string][]string{"cursor": {notCursor}}},
		{name: "cursor with a negative id", query: "cursor=" + base64URL("1767225600123456:-3"), want: map[string][]string{"cursor": {notCursor}}},
		{name: "cursor with base64 padding", query: "cursor=" + url.QueryEscape(base64.URLEncoding.EncodeToString([]byte("12:34"))), want: map[string][]string{"cursor": {notCursor}}},
		{name: "cursor of a raw pair, not encoded", query: "cursor=" + url.QueryEscape("1767225600123456:42"), want: map[string][]string{"cursor": {notCursor}}},
		{
			name: "every problem is reported at once", query: "limit=0&offset=abc&cursor=x",
			want: map[string][]string{"limit": {limitRange}, "offset": {whole}, "cursor": {notCursor}},
		},
	}
	for _, r := range pagedRoutes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					b := setup(t)
					r.auth(b)
					r.expect(b, gomock.Any()).Times(0)
					rec := b.do(newRequest(http.MethodGet, r.path+"?"+tc.query, "", r.headers))
					requireErrors(t, rec, http.StatusUnprocessableEntity, tc.want)
				})
			}
		})
	}
}

// TestPagingParams checks what good paging parameters reach the service as.
func TestPagingParams(t *testing.T) {
	t.Parallel()
	const micros = 1_767_225_600_123_456 // 2026-01-01T00:00:00.123456Z
	at := time.UnixMicro(micros)
	cursor := base64URL(fmt.Sprintf("%d:42", micros))
	tests := []struct {
		name  string
		query string
		want  domain.Page
	}{
		{name: "defaults", query: "", want: domain.Page{Limit: domain.DefaultPageLimit}},
		{name: "empty values mean the defaults", query: "limit=&offset=&cursor=", want: domain.Page{Limit: domain.DefaultPageLimit}},
		{name: "smallest limit", query: "limit=1", want: domain.Page{Limit: 1}},
		{name: "largest limit and offset", query: "limit=100&offset=100000", want: domain.Page{Limit: 100, Offset: 100_000}},
		{name: "a cursor", query: "cursor=" + cursor, want: domain.Page{Limit: 20, Cursor: &domain.Cursor{CreatedAt: at, ID: 42}}},
		{
			name: "with a cursor, limit and offset still parse", query: "limit=10&offset=5&cursor=" + cursor,
			want: domain.Page{Limit: 10, Offset: 5, Cursor: &domain.Cursor{CreatedAt: at, ID: 42}},
		},
		{
			name: "a cursor before 1970", query: "cursor=" + base64URL("-1000001:7"),
			want: domain.Page{Limit: 20, Cursor: &domain.Cursor{CreatedAt: time.UnixMicro(-1_000_001), ID: 7}},
		},
	}
	for _, r := range pagedRoutes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					b := setup(t)
					r.auth(b)
					r.expect(b, pageIs(tc.want)).Return(service.ArticleList{}, nil)
					rec := b.do(newRequest(http.MethodGet, r.path+"?"+tc.query, "", r.headers))
					requireJSON(t, rec, http.StatusOK, `{"articles":[],"articlesCount":0}`)
				})
			}
		})
	}
}

// TestCursorRoundTrip follows the API's own nextCursor: the time the service gets back is the
// one it handed out, to the microsecond, and the id is the same.
func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, r := range pagedRoutes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			// A time with nanoseconds, in another zone: the cursor carries microseconds.
			last := &domain.Cursor{CreatedAt: time.Date(2026, 5, 6, 7, 8, 9, 123_456_789, time.FixedZone("PDT", -7*3600)), ID: 9001}
			b := setup(t)
			r.auth(b)
			r.auth(b)
			first := r.expect(b, pageIs(domain.Page{Limit: 1})).
				Return(service.ArticleList{Articles: []domain.ArticleView{dragon}, Total: 5, NextCursor: last}, nil)
			r.expect(b, pageIs(domain.Page{Limit: 1, Cursor: &domain.Cursor{CreatedAt: last.CreatedAt.Truncate(time.Microsecond), ID: 9001}})).
				Return(service.ArticleList{Total: 5}, nil).After(first)

			rec := b.do(newRequest(http.MethodGet, r.path+"?limit=1", "", r.headers))
			requireStatus(t, rec, http.StatusOK)
			var page1 struct {
				NextCursor string `json:"nextCursor"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &page1); err != nil || page1.NextCursor == "" {
				t.Fatalf("first page %s has no nextCursor (%v)", rec.Body, err)
			}
			if want := base64URL(fmt.Sprintf("%d:9001", last.CreatedAt.UnixMicro())); page1.NextCursor != want {
				t.Errorf("nextCursor = %q, want %q", page1.NextCursor, want)
			}
			if strings.ContainsAny(page1.NextCursor, "+/=") {
				t.Errorf("nextCursor %q is not URL-safe", page1.NextCursor)
			}

			rec = b.do(newRequest(http.MethodGet, r.path+"?limit=1&cursor="+page1.NextCursor, "", r.headers))
			requireJSON(t, rec, http.StatusOK, `{"articles":[],"articlesCount":5}`)
		})
	}
}

// TestCommentPagingParams covers ?after= and ?limit= of GET /api/articles/:slug/comments.
func TestCommentPagingParams(t *testing.T) {
	t.Parallel()
	const slug = "how-to-train-your-dragon"
	lists := func(after int64, limit int) func(b bundle) {
		return func(b bundle) {
			b.comments.EXPECT().List(gomock.Any(), int64(0), slug, after, limit).Return(service.CommentList{Comments: []domain.CommentView{}}, nil)
		}
	}
	empty := func(t *testing.T, rec *httptest.ResponseRecorder) {
		requireJSON(t, rec, http.StatusOK, `{"comments":[]}`)
	}
	neverLists := func(b bundle) {
		b.comments.EXPECT().List(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	}
	bad := func(fields map[string][]string) func(t *testing.T, rec *httptest.ResponseRecorder) {
		return func(t *testing.T, rec *httptest.ResponseRecorder) {
			requireErrors(t, rec, http.StatusUnprocessableEntity, fields)
		}
	}
	base := "/api/articles/" + slug + "/comments"

	runAPICases(t, http.MethodGet, base, []apiCase{
		{name: "all of them by default", buildStubs: lists(0, service.MaxCommentsPerRequest), checkResponse: empty},
		{name: "after and limit", target: base + "?after=5&limit=10", buildStubs: lists(5, 10), checkResponse: empty},
		{name: "the largest limit", target: base + "?limit=1000", buildStubs: lists(0, 1000), checkResponse: empty},
		{name: "a large after", target: base + "?after=9007199254740992", buildStubs: lists(1<<53, service.MaxCommentsPerRequest), checkResponse: empty},
		{name: "a cursor is the after it names", target: base + "?limit=10&cursor=" + base64URL("n:41"), buildStubs: lists(41, 10), checkResponse: empty},
		{name: "a list's cursor is not a comment cursor", target: base + "?cursor=" + base64URL("1767225600123456:42"), buildStubs: neverLists, checkResponse: bad(map[string][]string{"cursor": {"is not a cursor this API returned"}})},
		{name: "a cursor of seq 0", target: base + "?cursor=" + base64URL("n:0"), buildStubs: neverLists, checkResponse: bad(map[string][]string{"cursor": {"is not a cursor this API returned"}})},
		{name: "cursor and after together", target: base + "?after=3&cursor=" + base64URL("n:41"), buildStubs: neverLists, checkResponse: bad(map[string][]string{"cursor": {"cannot be combined with after"}})},
		{name: "negative after", target: base + "?after=-1", buildStubs: neverLists, checkResponse: bad(map[string][]string{"after": {"must be between 0 and 9007199254740992"}})},
		{name: "after abc", target: base + "?after=abc", buildStubs: neverLists, checkResponse: bad(map[string][]string{"after": {"must be a whole number"}})},
		{name: "limit 0", target: base + "?limit=0", buildStubs: neverLists, checkResponse: bad(map[string][]string{"limit": {"must be between 1 and 1000"}})},
		{name: "limit 1001", target: base + "?limit=1001", buildStubs: neverLists, checkResponse: bad(map[string][]string{"limit": {"must be between 1 and 1000"}})},
		{
			name: "both wrong", target: base + "?after=x&limit=-2", buildStubs: neverLists,
			checkResponse: bad(map[string][]string{"after": {"must be a whole number"}, "limit": {"must be between 1 and 1000"}}),
		},
	})
}
