package web_test

import (
	"encoding/xml"
	"errors"
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

func feedRouter(t *testing.T, build func(s *mocks.MockFeedService)) http.Handler {
	t.Helper()
	ctrl := gomock.NewController(t)
	svc := mocks.NewMockFeedService(ctrl)
	svc.EXPECT().Links().Return(sitemapLinks(t)).AnyTimes()
	build(svc)
	logger := slog.New(slog.DiscardHandler)
	return web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{Feeds: web.NewFeedHandler(svc, nil, logger)})
}

// testFeed is a feed of one article whose body holds markup that must arrive escaped once.
func testFeed(stamp uint64) domain.Feed {
	pub := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := domain.Article{ID: 1, Slug: "dragons", Title: "Dragons & <friends>", Description: "about", BodyHTML: `<p>a <a href="https://x.example" rel="nofollow ugc noopener">link</a></p>`,
		Tags: []string{"go"}, Status: domain.StatusPublished, UpdatedAt: pub, PublishedAt: &pub}
	return domain.Feed{Title: "Articles", Link: "https://blog.example/", Updated: pub, Stamp: stamp,
		Entries: []domain.FeedEntry{{Article: a, Author: "jake", Link: "https://blog.example/article/dragons"}}}
}

func TestFeeds(t *testing.T) {
	t.Parallel()
	atomOK := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		requireStatus(t, rec, http.StatusOK)
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/atom+xml") {
			t.Fatalf("Content-Type %q", ct)
		}
		var doc struct {
			XMLName xml.Name
			ID      string `xml:"id"`
			Updated string `xml:"updated"`
			Links   []struct {
				Rel  string `xml:"rel,attr"`
				Href string `xml:"href,attr"`
			} `xml:"link"`
			Entries []struct {
				ID      string `xml:"id"`
				Title   string `xml:"title"`
				Author  string `xml:"author>name"`
				Content string `xml:"content"`
			} `xml:"entry"`
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.XMLName.Space != "http://www.w3.org/2005/Atom" || doc.ID == "" || doc.Updated != "2026-12-01T10:00:00Z" || len(doc.Links) != 2 {
			t.Fatalf("feed %+v", doc)
		}
		e := doc.Entries[0]
		if e.ID != "https://blog.example/article/dragons" || e.Title != "Dragons & <friends>" || e.Author != "jake" || !strings.HasPrefix(e.Content, `<p>a <a href="https://x.example"`) {
			t.Fatalf("entry %+v", e)
		}
		if rec.Header().Get("ETag") == "" || rec.Header().Get("Last-Modified") == "" {
			t.Fatalf("headers %v", rec.Header())
		}
	}
	notFound := func(ct string) func(t *testing.T, rec *httptest.ResponseRecorder) {
		return func(t *testing.T, rec *httptest.ResponseRecorder) {
			t.Helper()
			requireStatus(t, rec, http.StatusNotFound)
			if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, ct) {
				t.Fatalf("404 as %q, want %s", got, ct)
			}
		}
	}
	never := func(s *mocks.MockFeedService) { s.EXPECT().Feed(gomock.Any(), gomock.Any()).Times(0) }
	tests := []struct {
		name          string
		path          string
		headers       map[string]string
		buildStubs    func(s *mocks.MockFeedService)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "global Atom",
			path: "/feeds/articles.atom",
			buildStubs: func(s *mocks.MockFeedService) {
				s.EXPECT().Feed(gomock.Any(), service.FeedQuery{}).Return(testFeed(1), nil)
			},
			checkResponse: atomOK,
		},
		{
			name: "global RSS",
			path: "/feeds/articles.rss",
			buildStubs: func(s *mocks.MockFeedService) {
				s.EXPECT().Feed(gomock.Any(), service.FeedQuery{}).Return(testFeed(1), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				var doc struct {
					Version string `xml:"version,attr"`
					Items   []struct {
						Title       string `xml:"title"`
						Description string `xml:"description"`
						GUID        string `xml:"guid"`
						PubDate     string `xml:"pubDate"`
					} `xml:"channel>item"`
				}
				if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Version != "2.0" || len(doc.Items) != 1 || doc.Items[0].GUID == "" || doc.Items[0].PubDate != "Tue, 01 Dec 2026 10:00:00 +0000" ||
					!strings.HasPrefix(doc.Items[0].Description, "<p>a <a") {
					t.Fatalf("rss %+v", doc)
				}
			},
		},
		{
			name: "an author's feed: the suffix is cut off",
			path: "/feeds/authors/jake.atom",
			buildStubs: func(s *mocks.MockFeedService) {
				s.EXPECT().Feed(gomock.Any(), service.FeedQuery{Author: "jake"}).Return(testFeed(1), nil)
			},
			checkResponse: atomOK,
		},
		{
			name: "a tag's feed",
			path: "/feeds/tags/go.atom",
			buildStubs: func(s *mocks.MockFeedService) {
				s.EXPECT().Feed(gomock.Any(), service.FeedQuery{Tag: "go"}).Return(testFeed(1), nil)
			},
			checkResponse: atomOK,
		},
		{
			name: "an unknown author is 404 in Atom",
			path: "/feeds/authors/ghost.atom",
			buildStubs: func(s *mocks.MockFeedService) {
				s.EXPECT().Feed(gomock.Any(), service.FeedQuery{Author: "ghost"}).Return(domain.Feed{}, domain.ErrNotFound)
			},
			checkResponse: notFound("application/atom+xml"),
		},
		{name: "no .atom suffix", path: "/feeds/authors/jake", buildStubs: never, checkResponse: notFound("application/atom+xml")},
		{name: "an RSS author feed does not exist", path: "/feeds/tags/go.rss", buildStubs: never, checkResponse: notFound("application/atom+xml")},
		{name: "an empty name", path: "/feeds/tags/.atom", buildStubs: never, checkResponse: notFound("application/atom+xml")},
		{name: "NUL in a name", path: "/feeds/tags/a%00b.atom", buildStubs: never, checkResponse: notFound("application/atom+xml")},
		{name: "invalid UTF-8 in a name", path: "/feeds/authors/%ff.atom", buildStubs: never, checkResponse: notFound("application/atom+xml")},
		{name: "invalid UTF-8 under an RSS path", path: "/feeds/%ff/articles.rss", buildStubs: never, checkResponse: notFound("application/rss+xml")},
		{name: "a tag too long to exist", path: "/feeds/tags/" + strings.Repeat("t", domain.MaxTagLen+1) + ".atom", buildStubs: never, checkResponse: notFound("application/atom+xml")},
		{
			name:          "a matching If-None-Match is 304",
			path:          "/feeds/articles.atom",
			headers:       map[string]string{"If-None-Match": `"1atom"`},
			buildStubs:    func(s *mocks.MockFeedService) { s.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(testFeed(1), nil) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotModified) },
		},
		{
			name:          "another ETag gets the feed",
			path:          "/feeds/articles.atom",
			headers:       map[string]string{"If-None-Match": `"2atom"`, "If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"},
			buildStubs:    func(s *mocks.MockFeedService) { s.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(testFeed(1), nil) },
			checkResponse: atomOK,
		},
		{
			name:          "If-Modified-Since in the future is 304",
			path:          "/feeds/articles.atom",
			headers:       map[string]string{"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"},
			buildStubs:    func(s *mocks.MockFeedService) { s.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(testFeed(1), nil) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotModified) },
		},
		{
			name:          "If-Modified-Since in the past gets the feed",
			path:          "/feeds/articles.atom",
			headers:       map[string]string{"If-Modified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"},
			buildStubs:    func(s *mocks.MockFeedService) { s.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(testFeed(1), nil) },
			checkResponse: atomOK,
		},
		{
			name: "a storage failure is a JSON 500 without its text",
			path: "/feeds/articles.atom",
			buildStubs: func(s *mocks.MockFeedService) {
				s.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(domain.Feed{}, errors.New("pg: secret detail"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusInternalServerError)
				if strings.Contains(rec.Body.String(), "secret") {
					t.Fatalf("internal error text leaked: %s", rec.Body)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := feedRouter(t, tc.buildStubs)
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			tc.checkResponse(t, rec)
		})
	}
}

// TestFeedsKeepTheEncodingUnderItsStamp: the same stamp serves the same bytes (and ETag); a new
// stamp, a new encoding.
func TestFeedsKeepTheEncodingUnderItsStamp(t *testing.T) {
	t.Parallel()
	stamps := []uint64{5, 5, 6}
	r := feedRouter(t, func(s *mocks.MockFeedService) {
		for _, st := range stamps {
			f := testFeed(st)
			f.Entries[0].Article.Title = "v" + string(rune('0'+st))
			s.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(f, nil)
		}
	})
	var etags, bodies []string
	for range stamps {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/feeds/articles.atom", nil))
		requireStatus(t, rec, http.StatusOK)
		etags, bodies = append(etags, rec.Header().Get("ETag")), append(bodies, rec.Body.String())
	}
	if etags[0] != etags[1] || bodies[0] != bodies[1] || etags[1] == etags[2] || !strings.Contains(bodies[2], "v6") {
		t.Fatalf("etags %v; third body holds v6: %v", etags, strings.Contains(bodies[2], "v6"))
	}
}
