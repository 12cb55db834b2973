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
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

func sitemapLinks(t *testing.T) domain.PublicLinks {
	t.Helper()
	links, err := domain.NewPublicLinks("https://blog.example", "{public}/article/{slug}")
	if err != nil {
		t.Fatal(err)
	}
	return links
}

func sitemapRouter(t *testing.T, build func(s *mocks.MockSitemapService)) http.Handler {
	t.Helper()
	ctrl := gomock.NewController(t)
	svc := mocks.NewMockSitemapService(ctrl)
	svc.EXPECT().Links().Return(sitemapLinks(t)).AnyTimes()
	build(svc)
	logger := slog.New(slog.DiscardHandler)
	return web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{Sitemaps: web.NewSitemapHandler(svc, nil, logger)})
}

type sitemapDoc struct {
	XMLName  xml.Name
	Sitemaps []struct {
		Loc string `xml:"loc"`
	} `xml:"sitemap"`
	URLs []struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	} `xml:"url"`
}

func TestSitemaps(t *testing.T) {
	t.Parallel()
	mod := time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	wantXML := func(t *testing.T, rec *httptest.ResponseRecorder) sitemapDoc {
		t.Helper()
		requireStatus(t, rec, http.StatusOK)
		if ct := rec.Header().Get("Content-Type"); ct != "application/xml" {
			t.Errorf("Content-Type = %q, want application/xml", ct)
		}
		if rec.Header().Get("ETag") == "" {
			t.Error("no ETag")
		}
		if !strings.HasPrefix(rec.Body.String(), xml.Header) {
			t.Errorf("no XML declaration: %.60s", rec.Body)
		}
		var doc sitemapDoc
		if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.XMLName.Space != "http://www.sitemaps.org/schemas/sitemap/0.9" {
			t.Errorf("namespace %q", doc.XMLName.Space)
		}
		return doc
	}
	wantNotFound := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		requireStatus(t, rec, http.StatusNotFound)
	}
	tests := []struct {
		name          string
		path          string
		header        map[string]string
		buildStubs    func(s *mocks.MockSitemapService)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "the index lists every page with absolute URLs",
			path: "/sitemap.xml",
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Pages(gomock.Any()).Return(2, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				doc := wantXML(t, rec)
				if doc.XMLName.Local != "sitemapindex" || len(doc.Sitemaps) != 2 ||
					doc.Sitemaps[0].Loc != "https://blog.example/sitemaps/articles-1.xml" ||
					doc.Sitemaps[1].Loc != "https://blog.example/sitemaps/articles-2.xml" {
					t.Errorf("index %+v", doc)
				}
			},
		},
		{
			name: "an empty site has an empty index",
			path: "/sitemap.xml",
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Pages(gomock.Any()).Return(0, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if doc := wantXML(t, rec); doc.XMLName.Local != "sitemapindex" || len(doc.Sitemaps) != 0 {
					t.Errorf("index %+v", doc)
				}
			},
		},
		{
			name: "a page lists its articles with W3C lastmod in UTC",
			path: "/sitemaps/articles-2.xml",
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Page(gomock.Any(), 2).Return(domain.SitemapPage{LastMod: mod, Entries: []domain.SitemapEntry{
					{Loc: "https://blog.example/article/a&b", LastMod: mod},
					{Loc: "https://blog.example/article/c", LastMod: mod},
				}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				doc := wantXML(t, rec)
				if doc.XMLName.Local != "urlset" || len(doc.URLs) != 2 || doc.URLs[0].Loc != "https://blog.example/article/a&b" ||
					doc.URLs[0].LastMod != "2026-12-01T09:00:00Z" {
					t.Errorf("page %+v", doc)
				}
				if !strings.Contains(rec.Body.String(), "a&amp;b") {
					t.Error("& not escaped")
				}
			},
		},
		{
			name: "a page past the last is 404",
			path: "/sitemaps/articles-9.xml",
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Page(gomock.Any(), 9).Return(domain.SitemapPage{}, domain.ErrNotFound)
			},
			checkResponse: wantNotFound,
		},
		{
			name: "a storage failure is a 500 without its text",
			path: "/sitemap.xml",
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Pages(gomock.Any()).Return(0, errors.New("pq: secret detail"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code < 500 || strings.Contains(rec.Body.String(), "secret") {
					t.Errorf("status %d body %s", rec.Code, rec.Body)
				}
			},
		},
		{
			name:   "the ETag the client holds is 304",
			path:   "/sitemap.xml",
			header: map[string]string{"If-None-Match": `W/"other", ` + sitemapIndexETag(t, 1)},
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Pages(gomock.Any()).Return(1, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusNotModified)
				if rec.Body.Len() != 0 {
					t.Errorf("304 with a body %q", rec.Body)
				}
			},
		},
		{
			name: "robots.txt names the sitemap and keeps crawlers off the API",
			path: "/robots.txt",
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Pages(gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				body := rec.Body.String()
				if !strings.Contains(body, "\nSitemap: https://blog.example/sitemap.xml\n") || !strings.Contains(body, "Disallow: /api/\n") ||
					!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
					t.Errorf("robots.txt %q", body)
				}
			},
		},
	}
	for _, malformed := range []string{
		"/sitemaps/articles-0.xml", "/sitemaps/articles-01.xml", "/sitemaps/articles--1.xml", "/sitemaps/articles-+1.xml",
		"/sitemaps/articles-1.XML", "/sitemaps/articles-1", "/sitemaps/articles-.xml", "/sitemaps/articles-1x.xml",
		"/sitemaps/articles-9999999999.xml", "/sitemaps/articles-99999999999999999999.xml", "/sitemaps/users-1.xml",
		"/sitemaps/articles-%E2%91%A0.xml", "/sitemaps/articles-1.xml%00", "/sitemaps/articles-%ff.xml", "/sitemaps/",
	} {
		tests = append(tests, struct {
			name          string
			path          string
			header        map[string]string
			buildStubs    func(s *mocks.MockSitemapService)
			checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
		}{
			name: "malformed " + malformed,
			path: malformed,
			buildStubs: func(s *mocks.MockSitemapService) {
				s.EXPECT().Page(gomock.Any(), gomock.Any()).Times(0)
				s.EXPECT().Pages(gomock.Any()).Times(0)
			},
			checkResponse: wantNotFound,
		})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			router := sitemapRouter(t, tc.buildStubs)
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			u, err := req.URL.Parse(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			req.URL = u
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			tc.checkResponse(t, rec)
		})
	}
}

// sitemapIndexETag is the ETag of an index of n pages, read from a first answer.
func sitemapIndexETag(t *testing.T, pages int) string {
	t.Helper()
	router := sitemapRouter(t, func(s *mocks.MockSitemapService) { s.EXPECT().Pages(gomock.Any()).Return(pages, nil) })
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sitemap.xml", nil))
	return rec.Header().Get("ETag")
}
