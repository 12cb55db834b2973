package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

type searchCase struct {
	name, query   string
	headers       map[string]string
	buildStubs    func(s *mocks.MockSearchService)
	checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
}

func runSearchCases(t *testing.T, cases []searchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			users, search := mocks.NewMockUserService(ctrl), mocks.NewMockSearchService(ctrl)
			users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil).AnyTimes()
			tc.buildStubs(search)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
				Auth: web.NewAuthenticator(users, logger), Search: web.NewSearchHandler(search, logger),
			})
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, newRequest(http.MethodGet, "/api/search/articles?"+tc.query, "", tc.headers))
			tc.checkResponse(t, rec)
		})
	}
}

func wantSearchError(field, msg string) func(t *testing.T, rec *httptest.ResponseRecorder) {
	return func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422: %s", rec.Code, rec.Body)
		}
		var body struct{ Errors map[string][]string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Errors[field]) != 1 || !strings.Contains(body.Errors[field][0], msg) {
			t.Fatalf("errors %s, want %s: %q", rec.Body, field, msg)
		}
	}
}

func never(s *mocks.MockSearchService) {
	s.EXPECT().Articles(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
}

func TestSearchArticles(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	next := &domain.SearchCursor{Snapshot: time.Date(2026, 5, 1, 10, 0, 0, 123456000, time.UTC), SnapshotSeq: 123456789, Score: 0.123456789012345678, ID: 42, Total: 57}
	found := service.SearchResult{
		Hits:  []service.SearchResultHit{{View: dragon, Snippet: "Train <your> \x01dragons\x02 & \"more\""}},
		Total: 57, Next: next,
	}
	runSearchCases(t, []searchCase{
		{
			name: "a tag that cannot be stored names nothing: an empty answer", query: "q=dragons&tag=%00",
			buildStubs: func(s *mocks.MockSearchService) { s.EXPECT().Articles(a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireEmptyList(t, rec)
			},
		},
		{
			name: "an author that cannot be stored names nothing: an empty answer", query: "q=dragons&author=a%ffb",
			buildStubs: func(s *mocks.MockSearchService) { s.EXPECT().Articles(a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				requireEmptyList(t, rec)
			},
		},
		{
			name: "a query that is not UTF-8 is refused", query: "q=%ff",
			buildStubs:    func(s *mocks.MockSearchService) { s.EXPECT().Articles(a, a, a).Times(0) },
			checkResponse: wantSearchError("q", "must be UTF-8 text without NUL characters"),
		},
		{
			name: "hits with escaped snippets and a cursor", query: "q=dragons&tag=fantasy&author=jake&limit=5", headers: authHeader,
			buildStubs: func(s *mocks.MockSearchService) {
				s.EXPECT().Articles(a, authedID, service.SearchInput{Q: "dragons", Tag: "fantasy", Author: "jake", Limit: 5}).Return(found, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				var body struct {
					Articles []struct {
						Slug    string
						Snippet string
						Body    *string
					}
					ArticlesCount     int64
					NextCursor        string
					Suggestion        *string
					SuggestionApplied *bool
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
					t.Fatal(err)
				}
				if len(body.Articles) != 1 || body.Articles[0].Slug != dragon.Slug || body.Articles[0].Body != nil {
					t.Fatalf("articles %+v, want the summary of %s", body.Articles, dragon.Slug)
				}
				if want := "Train &lt;your&gt; <mark>dragons</mark> &amp; &#34;more&#34;"; body.Articles[0].Snippet != want {
					t.Fatalf("snippet %q, want %q", body.Articles[0].Snippet, want)
				}
				if body.ArticlesCount != 57 || body.NextCursor == "" || body.Suggestion != nil || body.SuggestionApplied == nil || *body.SuggestionApplied {
					t.Fatalf("envelope %s", rec.Body)
				}
				// The cursor comes back as it went out, exactly (the score too).
				checkSearchCursorRoundTrip(t, body.NextCursor, next)
			},
		},
		{
			name: "anonymous, suggestion applied", query: "q=dargon&suggest=true",
			buildStubs: func(s *mocks.MockSearchService) {
				s.EXPECT().Articles(a, int64(0), service.SearchInput{Q: "dargon", Limit: domain.DefaultPageLimit}).
					Return(service.SearchResult{Hits: []service.SearchResultHit{}, Suggestion: "dragon", SuggestionApplied: true}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"suggestion":"dragon","suggestionApplied":true`) ||
					!strings.Contains(rec.Body.String(), `"articles":[]`) || strings.Contains(rec.Body.String(), "nextCursor") {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			},
		},
		{
			name: "suggest=false keeps the results", query: "q=dargon&suggest=false",
			buildStubs: func(s *mocks.MockSearchService) {
				s.EXPECT().Articles(a, int64(0), service.SearchInput{Q: "dargon", Limit: domain.DefaultPageLimit, NoApply: true}).
					Return(service.SearchResult{Hits: []service.SearchResultHit{}, Suggestion: "dragon"}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"suggestion":"dragon","suggestionApplied":false`) {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			},
		},
		{
			name: "a cursor is passed on decoded", query: "q=x&cursor=" + encodeSearchCursorForTest(next),
			buildStubs: func(s *mocks.MockSearchService) {
				s.EXPECT().Articles(a, int64(0), gomock.Cond(func(in service.SearchInput) bool {
					return in.After != nil && in.After.Snapshot.Equal(next.Snapshot) && in.After.SnapshotSeq == next.SnapshotSeq && in.After.Score == next.Score &&
						in.After.ID == next.ID && in.After.Total == next.Total
				})).Return(service.SearchResult{Hits: []service.SearchResultHit{}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusOK {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			},
		},
		{
			name: "service errors map as everywhere", query: "q=x",
			buildStubs: func(s *mocks.MockSearchService) {
				s.EXPECT().Articles(a, a, a).Return(service.SearchResult{}, domain.ErrUnavailable)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusServiceUnavailable || strings.Contains(rec.Body.String(), "unavailable:") {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			},
		},
		{
			name: "internal error text never reaches the client", query: "q=x",
			buildStubs: func(s *mocks.MockSearchService) {
				s.EXPECT().Articles(a, a, a).Return(service.SearchResult{}, errors.New("pg: secret detail"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "secret") {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			},
		},
		{name: "no q", query: "", buildStubs: never, checkResponse: wantSearchError("q", "can't be blank")},
		{name: "blank q", query: "q=+%09+", buildStubs: never, checkResponse: wantSearchError("q", "can't be blank")},
		{name: "q too long", query: "q=" + strings.Repeat("x", 257), buildStubs: never, checkResponse: wantSearchError("q", "too long")},
		{name: "q of 256 CJK characters is not too long", query: "q=" + url.QueryEscape(strings.Repeat("缓", 256)),
			buildStubs: func(s *mocks.MockSearchService) {
				s.EXPECT().Articles(a, a, a).Return(service.SearchResult{Hits: []service.SearchResultHit{}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusOK {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}},
		{name: "NUL in q", query: "q=a%00b", buildStubs: never, checkResponse: wantSearchError("q", "UTF-8")},
		{name: "invalid UTF-8 in q", query: "q=%c0%af", buildStubs: never, checkResponse: wantSearchError("q", "UTF-8")},
		{name: "limit 0", query: "q=x&limit=0", buildStubs: never, checkResponse: wantSearchError("limit", "between 1 and 100")},
		{name: "limit 101", query: "q=x&limit=101", buildStubs: never, checkResponse: wantSearchError("limit", "between 1 and 100")},
		{name: "a list's cursor", query: "q=x&cursor=MTc5NTkyNDkyNDkwMjAwMDox", buildStubs: never, checkResponse: wantSearchError("cursor", "is not a cursor this API returned")},
		{name: "garbage cursor", query: "q=x&cursor=!!!", buildStubs: never, checkResponse: wantSearchError("cursor", "is not a cursor this API returned")},
		{name: "NaN score", query: "q=x&cursor=" + base64URL("s2:1795924924902000:7:NaN:9:1"), buildStubs: never, checkResponse: wantSearchError("cursor", "is not a cursor")},
		{name: "a cursor of the earlier format", query: "q=x&cursor=" + base64URL("s1:1795924924902000:0.5:9:1"), buildStubs: never, checkResponse: wantSearchError("cursor", "is not a cursor")},
		{name: "a negative snapshot place", query: "q=x&cursor=" + base64URL("s2:1795924924902000:-1:0.5:9:1"), buildStubs: never, checkResponse: wantSearchError("cursor", "is not a cursor")},
		{name: "bad suggest", query: "q=x&suggest=maybe", buildStubs: never, checkResponse: wantSearchError("suggest", "true or false")},
	})
}

// encodeSearchCursorForTest is the cursor format the handler writes (s2:snapshot µs:snapshot
// place:score:id:total).
func encodeSearchCursorForTest(c *domain.SearchCursor) string {
	return base64URL(fmt.Sprintf("s2:%d:%d:%s:%d:%d", c.Snapshot.UnixMicro(), c.SnapshotSeq, strconv.FormatFloat(c.Score, 'g', -1, 64), c.ID, c.Total))
}

func checkSearchCursorRoundTrip(t *testing.T, got string, want *domain.SearchCursor) {
	t.Helper()
	if enc := encodeSearchCursorForTest(want); got != enc {
		t.Fatalf("cursor %q, want %q", got, enc)
	}
}
