package e2e

import (
	"encoding/xml"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/ioc"
)

const sitemapPublicURL = "https://blog.example"

// isoSeconds is a W3C datetime in UTC to the second, as sitemaps write lastmod.
var isoSeconds = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)

func sitemapSite(c *ioc.Config) { c.Server.PublicURL = sitemapPublicURL + "/" }

type sitemapXML struct {
	XMLName  xml.Name
	Sitemaps []struct {
		Loc string `xml:"loc"`
	} `xml:"sitemap"`
	URLs []struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	} `xml:"url"`
}

// sitemapGet fetches path and parses it as a sitemap document.
func (a *testApp) sitemapGet(t *testing.T, path string) (sitemapXML, response) {
	t.Helper()
	r := a.Do("GET", path, "", nil).Expect(t, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "application/xml" {
		t.Fatalf("GET %s: Content-Type %q, want application/xml", path, ct)
	}
	var doc sitemapXML
	if err := xml.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("GET %s: not XML (%v): %s", path, err, r.Body)
	}
	if doc.XMLName.Space != "http://www.sitemaps.org/schemas/sitemap/0.9" {
		t.Fatalf("GET %s: namespace %q", path, doc.XMLName.Space)
	}
	return doc, r
}

// sitemapLocs follows the index to every page and returns every article link, checking that
// each page is named by an absolute URL under the public URL.
func (a *testApp) sitemapLocs(t *testing.T) []string {
	t.Helper()
	index, _ := a.sitemapGet(t, "/sitemap.xml")
	if index.XMLName.Local != "sitemapindex" {
		t.Fatalf("the index is a %q", index.XMLName.Local)
	}
	var locs []string
	for _, s := range index.Sitemaps {
		path, ok := strings.CutPrefix(s.Loc, sitemapPublicURL)
		if !ok || !strings.HasPrefix(path, "/sitemaps/articles-") {
			t.Fatalf("index entry %q is not a page under %s", s.Loc, sitemapPublicURL)
		}
		page, _ := a.sitemapGet(t, path)
		if page.XMLName.Local != "urlset" || len(page.URLs) > 50_000 {
			t.Fatalf("%s: a %q of %d URLs", path, page.XMLName.Local, len(page.URLs))
		}
		for _, u := range page.URLs {
			if !isoSeconds.MatchString(u.LastMod) {
				t.Errorf("%s: lastmod %q is not a W3C datetime", u.Loc, u.LastMod)
			}
			locs = append(locs, u.Loc)
		}
	}
	return locs
}

func TestSitemaps_IndexPagesAndRobots(t *testing.T) {
	parallel(t)
	app := startApp(t, sitemapSite)
	author := app.Register("mapmaker")
	admin, _ := app.staff(t, "mapstaff")
	var slugs []string
	for _, title := range []string{"Maps of Dragons", "Maps of Seas", "Maps of Stars", "Maps of Caves"} {
		slugs = append(slugs, app.publish(author, title))
	}
	draft := newArticle("A Draft Map")
	draft["article"].(map[string]any)["draft"] = true
	draftSlug := app.Do("POST", "/api/articles", author, draft).Expect(t, http.StatusCreated).Article(t)["slug"].(string)
	link := func(slug string) string { return sitemapPublicURL + "/article/" + slug }

	locs := app.sitemapLocs(t)
	for _, s := range slugs {
		if !slices.Contains(locs, link(s)) {
			t.Errorf("the sitemaps lack %s: %v", link(s), locs)
		}
	}
	if slices.Contains(locs, link(draftSlug)) {
		t.Errorf("the sitemaps list the draft %s", draftSlug)
	}

	// A client holding the index's ETag is answered 304.
	_, first := app.sitemapGet(t, "/sitemap.xml")
	app.Do("GET", "/sitemap.xml", "", nil, "If-None-Match", first.Header.Get("ETag")).Expect(t, http.StatusNotModified)

	// Withdrawn, hidden and deleted articles leave with the next request, wherever it lands.
	app.Do("POST", "/api/articles/"+slugs[0]+"/withdraw", author, nil).Expect(t, http.StatusOK)
	app.Do("POST", "/api/moderation/articles/"+slugs[1]+"/hide", admin, map[string]any{"reason": "test"}).Expect(t, http.StatusOK)
	app.Do("DELETE", "/api/articles/"+slugs[2], author, nil).Expect(t, http.StatusNoContent)
	for range 3 { // in a fleet, each round may be served by another instance
		locs = app.sitemapLocs(t)
		for _, gone := range slugs[:3] {
			if slices.Contains(locs, link(gone)) {
				t.Fatalf("%s is still listed after it left: %v", gone, locs)
			}
		}
		if !slices.Contains(locs, link(slugs[3])) {
			t.Fatalf("the sitemaps lost %s: %v", slugs[3], locs)
		}
	}

	for _, path := range []string{"/sitemaps/articles-0.xml", "/sitemaps/articles-999.xml", "/sitemaps/articles-01.xml",
		"/sitemaps/articles-1.txt", "/sitemaps/articles-%00.xml", "/sitemaps/articles-%ff.xml"} {
		app.Do("GET", path, "", nil).Expect(t, http.StatusNotFound)
	}

	robots := app.Do("GET", "/robots.txt", "", nil).Expect(t, http.StatusOK)
	body := string(robots.Body)
	if !strings.Contains(body, "Sitemap: "+sitemapPublicURL+"/sitemap.xml\n") || !strings.Contains(body, "Disallow: /api/\n") {
		t.Errorf("robots.txt:\n%s", body)
	}
}
