package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=sitemaps.go -destination=mocks/sitemaps_mock.go -package=mocks

// SitemapService is the sitemaps as GET /sitemap.xml and /sitemaps/articles-N.xml read them.
type SitemapService interface {
	// Pages returns how many article pages there are (numbered from 1).
	Pages(ctx context.Context) (int, error)
	// Page returns article page n; domain.ErrNotFound when there is no such page.
	Page(ctx context.Context, n int) (domain.SitemapPage, error)
	// Links returns the public links (the base URL the index and robots.txt name).
	Links() domain.PublicLinks
}

const (
	sitemapXMLNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	// sitemapCacheControl: caches may keep a sitemap but ask again each time (a 304 when the ETag
	// still matches), so a withdrawn article leaves with the next request, wherever it is cached.
	sitemapCacheControl = "public, no-cache"
	sitemapPagePrefix   = "articles-"
	sitemapPageSuffix   = ".xml"
	// sitemapMaxPageDigits bounds the page number a path may name: a billion pages is far beyond
	// any index (50,000 entries), and the number can never overflow an int.
	sitemapMaxPageDigits = 9
	// sitemapMemoBytes bounds the encoded sitemaps an instance keeps (a page of 1,000 articles is
	// ~100 KB): the index and the pages crawlers read lately.
	sitemapMemoBytes = 32 << 20
)

// SitemapHandler serves GET /sitemap.xml, /sitemaps/articles-N.xml and /robots.txt, outside /api:
// crawlers look for them at the site's root. An encoded sitemap is kept per path and written as it
// is while nothing changed (ContentChanges); any change of an article moves the version on every
// instance, and the next read builds it again from PostgreSQL.
type SitemapHandler struct {
	svc     SitemapService
	changes ContentChanges
	log     *slog.Logger
	memo    *docMemo
}

// NewSitemapHandler returns the handler; changes may be nil (every read then builds the sitemap).
func NewSitemapHandler(svc SitemapService, changes ContentChanges, log *slog.Logger) *SitemapHandler {
	return &SitemapHandler{svc: svc, changes: changes, log: log, memo: newDocMemo(sitemapMemoBytes)}
}

// fromMemo answers the request from the memo when its path's sitemap is current, and otherwise
// returns the version to keep the one about to be built under.
func (h *SitemapHandler) fromMemo(c *gin.Context) (version uint64, tracked, served bool) {
	if h.changes == nil {
		return 0, false, false
	}
	if version, tracked = h.changes.Version(); !tracked {
		return 0, false, false
	}
	if doc, ok := h.memo.current(c.Request.URL.Path, version); ok {
		writeSitemap(c, doc)
		return version, true, true
	}
	return version, true, false
}

type sitemapIndexXML struct {
	XMLName  xml.Name        `xml:"sitemapindex"`
	XMLNS    string          `xml:"xmlns,attr"`
	Sitemaps []sitemapLocXML `xml:"sitemap"`
}

type sitemapLocXML struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod,omitempty"`
}

type sitemapURLSetXML struct {
	XMLName xml.Name        `xml:"urlset"`
	XMLNS   string          `xml:"xmlns,attr"`
	URLs    []sitemapLocXML `xml:"url"`
}

// Index answers GET /sitemap.xml: the sitemap index, one entry per article page.
func (h *SitemapHandler) Index(c *gin.Context) {
	version, tracked, served := h.fromMemo(c)
	if served {
		return
	}
	pages, err := h.svc.Pages(c.Request.Context())
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	base := h.svc.Links().Base()
	index := sitemapIndexXML{XMLNS: sitemapXMLNS, Sitemaps: make([]sitemapLocXML, pages)}
	for i := range index.Sitemaps {
		index.Sitemaps[i].Loc = base + "/sitemaps/" + sitemapPagePrefix + strconv.Itoa(i+1) + sitemapPageSuffix
	}
	h.writeXML(c, index, version, tracked)
}

// Page answers GET /sitemaps/:file, where file is articles-N.xml (N from 1, no leading zero);
// any other name, or a page past the last, is 404 before or after asking the service.
func (h *SitemapHandler) Page(c *gin.Context) {
	n, ok := parseSitemapPage(c.Param("file"))
	if !ok {
		sitemapNotFound(c)
		return
	}
	version, tracked, served := h.fromMemo(c)
	if served {
		return
	}
	page, err := h.svc.Page(c.Request.Context(), n)
	if errors.Is(err, domain.ErrNotFound) {
		sitemapNotFound(c)
		return
	}
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	set := sitemapURLSetXML{XMLNS: sitemapXMLNS, URLs: make([]sitemapLocXML, len(page.Entries))}
	for i, e := range page.Entries {
		set.URLs[i] = sitemapLocXML{Loc: e.Loc, LastMod: e.LastMod.UTC().Format(time.RFC3339)}
	}
	h.writeXML(c, set, version, tracked)
}

// Robots answers GET /robots.txt: crawlers may read the site but not the JSON API (nothing there
// is a page a reader lands on, and every article is in the sitemap), and the sitemap is named.
func (h *SitemapHandler) Robots(c *gin.Context) {
	body := "User-agent: *\nDisallow: /api/\n\nSitemap: " + h.svc.Links().Base() + "/sitemap.xml\n"
	c.Header("Cache-Control", "public, max-age=3600")
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(body))
}

// parseSitemapPage reads N of articles-N.xml: decimal digits, no sign, no leading zero.
func parseSitemapPage(file string) (int, bool) {
	digits, ok := strings.CutPrefix(file, sitemapPagePrefix)
	if !ok {
		return 0, false
	}
	if digits, ok = strings.CutSuffix(digits, sitemapPageSuffix); !ok {
		return 0, false
	}
	if digits == "" || len(digits) > sitemapMaxPageDigits || digits[0] == '0' {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// writeXML answers v as XML with a strong ETag of its bytes, or 304 when the client holds them,
// and keeps the encoding under version when tracked. No Last-Modified: a withdrawal leaves no
// newer time behind, so only the bytes tell a change.
func (h *SitemapHandler) writeXML(c *gin.Context, v any, version uint64, tracked bool) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(v); err != nil {
		writeError(c, h.log, err)
		return
	}
	sum := sha256.Sum256(buf.Bytes())
	doc := memoDoc{version: version, tracked: tracked, body: buf.Bytes(), etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
	if tracked {
		h.memo.put(c.Request.URL.Path, doc)
	}
	writeSitemap(c, doc)
}

// writeSitemap answers doc, or 304 when the client holds it.
func writeSitemap(c *gin.Context, doc memoDoc) {
	c.Header("ETag", doc.etag)
	c.Header("Cache-Control", sitemapCacheControl)
	if etagMatches(c.GetHeader("If-None-Match"), doc.etag) {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, "application/xml", doc.body) // the XML declaration names UTF-8
}

// etagMatches: If-None-Match lists etag (weakly compared, as RFC 9110 asks for GET) or is "*".
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// sitemapNotFound answers 404 in the API's one error shape: a crawler reads only the status.
func sitemapNotFound(c *gin.Context) {
	abortWith(c, http.StatusNotFound, "sitemap", "no such sitemap")
}
