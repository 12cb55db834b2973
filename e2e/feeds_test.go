package e2e

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
)

// atomDoc and rssDoc are what the tests read of the two formats: every element each requires.
type atomDoc struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string   `xml:"id"`
	Title   string   `xml:"title"`
	Updated string   `xml:"updated"`
	Links   []struct {
		Rel  string `xml:"rel,attr"`
		Href string `xml:"href,attr"`
	} `xml:"link"`
	Entries []struct {
		ID      string `xml:"id"`
		Title   string `xml:"title"`
		Updated string `xml:"updated"`
		Author  struct {
			Name string `xml:"name"`
		} `xml:"author"`
		Link struct {
			Rel  string `xml:"rel,attr"`
			Href string `xml:"href,attr"`
		} `xml:"link"`
		Content struct {
			Type string `xml:"type,attr"`
			Body string `xml:",chardata"`
		} `xml:"content"`
	} `xml:"entry"`
}

type rssDoc struct {
	XMLName xml.Name `xml:"rss"`
	Version string   `xml:"version,attr"`
	Channel struct {
		Title string `xml:"title"`
		Links []struct {
			XMLName xml.Name
			Value   string `xml:",chardata"`
		} `xml:"link"` // the channel's link, and its atom:link rel=self
		Description string `xml:"description"`
		Items       []struct {
			Title       string `xml:"title"`
			Link        string `xml:"link"`
			Description string `xml:"description"`
			GUID        string `xml:"guid"`
			PubDate     string `xml:"pubDate"`
		} `xml:"item"`
	} `xml:"channel"`
}

// atomFeed reads an Atom feed, checks its content type and required elements, and returns the
// entries' titles.
func (a *testApp) atomFeed(t *testing.T, path string) (atomDoc, response) {
	t.Helper()
	res := a.call(t, "GET", path, "", nil).Expect(t, http.StatusOK)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/atom+xml") {
		t.Fatalf("%s: Content-Type %q", path, ct)
	}
	var doc atomDoc
	if err := xml.Unmarshal(res.Body, &doc); err != nil {
		t.Fatalf("%s is not Atom: %v\n%s", path, err, res.Body)
	}
	rels := map[string]bool{}
	for _, l := range doc.Links {
		rels[l.Rel] = l.Href != ""
	}
	if doc.ID == "" || doc.Title == "" || doc.Updated == "" || !rels["self"] || !rels["alternate"] {
		t.Fatalf("%s lacks a required feed element: %+v", path, doc)
	}
	for _, e := range doc.Entries {
		if e.ID == "" || e.Title == "" || e.Updated == "" || e.Author.Name == "" || e.Link.Rel != "alternate" || e.Link.Href == "" || e.Content.Type != "html" {
			t.Fatalf("%s: an entry lacks a required element: %+v", path, e)
		}
	}
	if res.Header.Get("ETag") == "" || res.Header.Get("Last-Modified") == "" {
		t.Fatalf("%s: no ETag or Last-Modified: %v", path, res.Header)
	}
	return doc, res
}

func atomTitles(doc atomDoc) []string {
	out := make([]string, len(doc.Entries))
	for i, e := range doc.Entries {
		out[i] = e.Title
	}
	return out
}

func TestFeeds(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("feedwriter")
	admin, _ := app.staff(t, "feedstaff")
	body := "# Heading\n\n[x](javascript:alert(1)) <script>alert(1)</script> **bold**"
	var slugs []string
	for _, title := range []string{"Feed one", "Feed two", "Feed three"} {
		slugs = append(slugs, articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
			"title": title, "description": "d", "body": body, "tagList": []string{"feedtag"},
		}}).Expect(t, http.StatusCreated))["slug"].(string))
	}

	t.Run("Atom feeds hold the newest articles, sanitized", func(t *testing.T) {
		for _, path := range []string{"/feeds/articles.atom", "/feeds/authors/feedwriter.atom", "/feeds/tags/feedtag.atom"} {
			doc, _ := app.atomFeed(t, path)
			if got := strings.Join(atomTitles(doc), ","); got != "Feed three,Feed two,Feed one" {
				t.Fatalf("%s: entries %s", path, got)
			}
			c := doc.Entries[0].Content.Body
			if !strings.Contains(c, `<h1 id="heading">Heading</h1>`) || !strings.Contains(c, "<strong>bold</strong>") ||
				strings.Contains(c, "<script") || strings.Contains(c, "javascript:") {
				t.Fatalf("%s: content %q", path, c)
			}
			if !strings.HasSuffix(doc.Entries[0].Link.Href, "/article/"+slugs[2]) {
				t.Fatalf("%s: link %q", path, doc.Entries[0].Link.Href)
			}
		}
	})

	t.Run("RSS 2.0 holds the same articles", func(t *testing.T) {
		res := app.call(t, "GET", "/feeds/articles.rss", "", nil).Expect(t, http.StatusOK)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/rss+xml") {
			t.Fatalf("Content-Type %q", ct)
		}
		var doc rssDoc
		if err := xml.Unmarshal(res.Body, &doc); err != nil {
			t.Fatalf("not RSS: %v\n%s", err, res.Body)
		}
		ch := doc.Channel
		link := ""
		for _, l := range ch.Links {
			if l.XMLName.Space == "" {
				link = l.Value
			}
		}
		if doc.Version != "2.0" || ch.Title == "" || link == "" || ch.Description == "" || len(ch.Items) != 3 {
			t.Fatalf("channel %+v", doc)
		}
		for _, it := range ch.Items {
			if it.Title == "" || it.Link == "" || it.GUID == "" || it.PubDate == "" || !strings.Contains(it.Description, "<strong>bold</strong>") {
				t.Fatalf("item %+v", it)
			}
		}
	})

	t.Run("conditional requests answer 304", func(t *testing.T) {
		_, res := app.atomFeed(t, "/feeds/articles.atom")
		etag, lastMod := res.Header.Get("ETag"), res.Header.Get("Last-Modified")
		// Behind a balancer another instance may answer: the ETag is the content's, the same on all.
		app.call(t, "GET", "/feeds/articles.atom", "", nil, "If-None-Match", etag).Expect(t, http.StatusNotModified)
		app.call(t, "GET", "/feeds/articles.atom", "", nil, "If-None-Match", `"other", `+etag).Expect(t, http.StatusNotModified)
		app.call(t, "GET", "/feeds/articles.atom", "", nil, "If-None-Match", `"other"`).Expect(t, http.StatusOK)
		singleInstance(t, "Last-Modified is when an instance encoded the feed")
		app.call(t, "GET", "/feeds/articles.atom", "", nil, "If-Modified-Since", lastMod).Expect(t, http.StatusNotModified)
		app.call(t, "GET", "/feeds/articles.atom", "", nil, "If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT").Expect(t, http.StatusOK)
	})

	t.Run("unknown authors and tags, bad names are 404 in the feed's type", func(t *testing.T) {
		for _, path := range []string{"/feeds/authors/nobody-here.atom", "/feeds/tags/no-such-tag.atom", "/feeds/authors/feedwriter",
			"/feeds/authors/feedwriter.rss", "/feeds/tags/a%00b.atom", "/feeds/tags/%ff%fe.atom", "/feeds/authors/%00.atom", "/feeds/tags/.atom",
			"/feeds/tags/" + strings.Repeat("x", 41) + ".atom"} {
			res := app.call(t, "GET", path, "", nil).Expect(t, http.StatusNotFound)
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/atom+xml") {
				t.Errorf("%s: 404 as %q: %s", path, ct, res.Body)
			}
		}
	})

	t.Run("withdrawn, hidden and deleted articles leave the feeds at once", func(t *testing.T) {
		_, before := app.atomFeed(t, "/feeds/articles.atom")
		app.Do("POST", "/api/articles/"+slugs[0]+"/withdraw", author, nil).Expect(t, http.StatusOK)
		app.Do("POST", "/api/moderation/articles/"+slugs[1]+"/hide", admin, map[string]any{"reason": "test"}).Expect(t, http.StatusOK)
		app.Do("DELETE", "/api/articles/"+slugs[2], author, nil).Expect(t, http.StatusNoContent)
		for _, path := range []string{"/feeds/articles.atom", "/feeds/authors/feedwriter.atom"} {
			if doc, _ := app.atomFeed(t, path); len(doc.Entries) != 0 {
				t.Errorf("%s still holds %v", path, atomTitles(doc))
			}
		}
		app.call(t, "GET", "/feeds/tags/feedtag.atom", "", nil).Expect(t, http.StatusNotFound)
		app.call(t, "GET", "/feeds/articles.atom", "", nil, "If-None-Match", before.Header.Get("ETag")).Expect(t, http.StatusOK)
	})
}
