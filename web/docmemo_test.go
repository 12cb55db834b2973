package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// fakeChanges is a ContentChanges the test moves by hand.
type fakeChanges struct {
	v   atomic.Uint64
	off atomic.Bool
}

func (f *fakeChanges) Version() (uint64, bool) { return f.v.Load(), !f.off.Load() }

func get(t *testing.T, r http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// TestFeedsServeTheMemoWhileNothingChanged: while the change version stays, a feed is written from
// the memo without asking the service; a new version asks again (and keeps the same ETag when the
// content's stamp did not change); with changes not followed, every read asks.
func TestFeedsServeTheMemoWhileNothingChanged(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	svc := mocks.NewMockFeedService(ctrl)
	svc.EXPECT().Links().Return(sitemapLinks(t)).AnyTimes()
	changes := &fakeChanges{}
	logger := slog.New(slog.DiscardHandler)
	r := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{Feeds: web.NewFeedHandler(svc, changes, logger)})

	svc.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(testFeed(5), nil).Times(1)
	first := get(t, r, "/feeds/articles.atom")
	requireStatus(t, first, http.StatusOK)
	for range 3 {
		again := get(t, r, "/feeds/articles.atom")
		requireStatus(t, again, http.StatusOK)
		if again.Body.String() != first.Body.String() || again.Header().Get("ETag") != first.Header().Get("ETag") {
			t.Fatal("the memo served other bytes")
		}
	}

	t.Log("a change elsewhere, same content: asked once, same ETag")
	changes.v.Add(1)
	svc.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(testFeed(5), nil).Times(1)
	for range 2 {
		if rec := get(t, r, "/feeds/articles.atom"); rec.Header().Get("ETag") != first.Header().Get("ETag") {
			t.Fatalf("ETag %q after an unrelated change, want %q", rec.Header().Get("ETag"), first.Header().Get("ETag"))
		}
	}

	t.Log("a change of the feed's content: a new encoding")
	changes.v.Add(1)
	changed := testFeed(6)
	changed.Entries[0].Article.Title = "Withdrawn soon"
	svc.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(changed, nil).Times(1)
	if rec := get(t, r, "/feeds/articles.atom"); !strings.Contains(rec.Body.String(), "Withdrawn soon") {
		t.Fatal("the new content was not served")
	}

	t.Log("RSS is a document of its own")
	svc.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(changed, nil).Times(1)
	requireStatus(t, get(t, r, "/feeds/articles.rss"), http.StatusOK)
	requireStatus(t, get(t, r, "/feeds/articles.rss"), http.StatusOK)

	t.Log("changes not followed (the subscription is down): every read asks")
	changes.off.Store(true)
	svc.EXPECT().Feed(gomock.Any(), gomock.Any()).Return(changed, nil).Times(2)
	get(t, r, "/feeds/articles.atom")
	get(t, r, "/feeds/articles.atom")
}

// TestSitemapsServeTheMemoWhileNothingChanged: the index and each page are kept under the change
// version; a change reads them again from the service; not followed, never kept.
func TestSitemapsServeTheMemoWhileNothingChanged(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	svc := mocks.NewMockSitemapService(ctrl)
	svc.EXPECT().Links().Return(sitemapLinks(t)).AnyTimes()
	changes := &fakeChanges{}
	logger := slog.New(slog.DiscardHandler)
	r := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{Sitemaps: web.NewSitemapHandler(svc, changes, logger)})
	page := func(slug string) domain.SitemapPage {
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		return domain.SitemapPage{LastMod: at, Entries: []domain.SitemapEntry{{Loc: "https://blog.example/article/" + slug, LastMod: at}}}
	}

	svc.EXPECT().Pages(gomock.Any()).Return(2, nil).Times(1)
	svc.EXPECT().Page(gomock.Any(), 1).Return(page("one"), nil).Times(1)
	svc.EXPECT().Page(gomock.Any(), 2).Return(page("two"), nil).Times(1)
	for range 3 {
		requireStatus(t, get(t, r, "/sitemap.xml"), http.StatusOK)
		if rec := get(t, r, "/sitemaps/articles-1.xml"); !strings.Contains(rec.Body.String(), "/article/one") {
			t.Fatalf("page 1: %s", rec.Body.String())
		}
		if rec := get(t, r, "/sitemaps/articles-2.xml"); !strings.Contains(rec.Body.String(), "/article/two") {
			t.Fatalf("page 2: %s", rec.Body.String())
		}
	}

	t.Log("an article withdrawn anywhere: the page is read again")
	changes.v.Add(1)
	svc.EXPECT().Page(gomock.Any(), 1).Return(domain.SitemapPage{}, nil).Times(1)
	if rec := get(t, r, "/sitemaps/articles-1.xml"); strings.Contains(rec.Body.String(), "/article/one") {
		t.Fatal("the withdrawn article is still listed")
	}

	t.Log("not followed: every read asks")
	changes.off.Store(true)
	svc.EXPECT().Pages(gomock.Any()).Return(2, nil).Times(2)
	get(t, r, "/sitemap.xml")
	get(t, r, "/sitemap.xml")
}
