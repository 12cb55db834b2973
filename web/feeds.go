package web

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=feeds.go -destination=mocks/feeds_mock.go -package=mocks

// FeedService is the feeds' content as the feed endpoints read it.
type FeedService interface {
	// Feed returns the feed q names; domain.ErrNotFound for an unknown author or tag.
	Feed(ctx context.Context, q service.FeedQuery) (domain.Feed, error)
	// Links returns the public links (the base URL of the feeds' self links).
	Links() domain.PublicLinks
}

// feedFormat is an encoding of a feed: Atom 1.0 or RSS 2.0.
type feedFormat struct {
	suffix      string
	contentType string
	encode      func(domain.Feed, string) any // the feed and its own URL → the XML document
}

var (
	atomFormat = feedFormat{".atom", "application/atom+xml; charset=utf-8", atomOf}
	rssFormat  = feedFormat{".rss", "application/rss+xml; charset=utf-8", rssOf}
)

const (
	// feedCacheControl: a feed reader or a proxy may keep a feed but asks again each time (a 304
	// while the ETag matches), so a withdrawn article leaves with the next request.
	feedCacheControl = "public, no-cache"
	// feedMemoBytes bounds the encoded feeds an instance keeps (the global ones, and the authors'
	// and tags' feeds read lately, ~25 KB each for 20 articles).
	feedMemoBytes = 32 << 20
)

// FeedHandler serves the Atom and RSS feeds, outside /api: feed readers find them by their URLs.
// A feed's encoding is kept per path: while nothing changed (ContentChanges) it is written as it
// is, without reading the list, the articles or their authors again.
type FeedHandler struct {
	svc     FeedService
	changes ContentChanges
	log     *slog.Logger
	memo    *docMemo
	now     func() time.Time
}

// NewFeedHandler returns the handler; changes may be nil (every read then builds the feed).
func NewFeedHandler(svc FeedService, changes ContentChanges, log *slog.Logger) *FeedHandler {
	return &FeedHandler{svc: svc, changes: changes, log: log, memo: newDocMemo(feedMemoBytes), now: time.Now}
}

// GlobalAtom answers GET /feeds/articles.atom.
func (h *FeedHandler) GlobalAtom(c *gin.Context) { h.serve(c, atomFormat, service.FeedQuery{}) }

// GlobalRSS answers GET /feeds/articles.rss.
func (h *FeedHandler) GlobalRSS(c *gin.Context) { h.serve(c, rssFormat, service.FeedQuery{}) }

// Author answers GET /feeds/authors/:file, file being USERNAME.atom.
func (h *FeedHandler) Author(c *gin.Context) {
	name, ok := strings.CutSuffix(c.Param("file"), atomFormat.suffix)
	if !ok || !domain.FeedName(name, domain.MaxUsernameLen) {
		feedNotFound(c, atomFormat)
		return
	}
	h.serve(c, atomFormat, service.FeedQuery{Author: name})
}

// Tag answers GET /feeds/tags/:file, file being TAG.atom.
func (h *FeedHandler) Tag(c *gin.Context) {
	tag, ok := strings.CutSuffix(c.Param("file"), atomFormat.suffix)
	if !ok || !domain.FeedName(tag, domain.MaxTagLen) {
		feedNotFound(c, atomFormat)
		return
	}
	h.serve(c, atomFormat, service.FeedQuery{Tag: tag})
}

// serve answers the feed q in format f: the kept encoding while nothing changed since it was
// made; else the feed is read again, and its kept encoding is reused (same ETag and
// Last-Modified) when the content's stamp shows the change did not concern it.
func (h *FeedHandler) serve(c *gin.Context, f feedFormat, q service.FeedQuery) {
	path := c.Request.URL.Path
	version, tracked := h.version()
	if tracked {
		if doc, ok := h.memo.current(path, version); ok {
			writeFeed(c, f, doc)
			return
		}
	}
	feed, err := h.svc.Feed(c.Request.Context(), q)
	if errors.Is(err, domain.ErrNotFound) {
		feedNotFound(c, f)
		return
	}
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	doc, ok := h.memo.get(path)
	if !ok || doc.stamp != feed.Stamp {
		if doc, err = h.encode(f, feed, h.svc.Links().Base()+c.Request.URL.EscapedPath()); err != nil {
			writeError(c, h.log, err)
			return
		}
	}
	// The version was taken before the feed was read: a change since then moved it, so this
	// encoding is not served from the memo after that change.
	doc.version, doc.tracked = version, tracked
	h.memo.put(path, doc)
	writeFeed(c, f, doc)
}

func (h *FeedHandler) version() (uint64, bool) {
	if h.changes == nil {
		return 0, false
	}
	return h.changes.Version()
}

// writeFeed answers doc, or 304 when the client holds it.
func writeFeed(c *gin.Context, f feedFormat, doc memoDoc) {
	c.Header("ETag", doc.etag)
	c.Header("Last-Modified", doc.lastModified.UTC().Format(http.TimeFormat))
	c.Header("Cache-Control", feedCacheControl)
	if notModified(c.Request, doc) {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, f.contentType, doc.body)
}

// encode writes feed in format f. Its Last-Modified is when this instance encoded it: a withdrawal
// leaves no newer article time behind, but always a new encoding after it.
func (h *FeedHandler) encode(f feedFormat, feed domain.Feed, self string) (memoDoc, error) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(f.encode(feed, self)); err != nil {
		return memoDoc{}, err
	}
	return memoDoc{
		stamp: feed.Stamp, body: buf.Bytes(), lastModified: h.now().Truncate(time.Second),
		etag: `"` + strconv.FormatUint(feed.Stamp, 36) + strings.TrimPrefix(f.suffix, ".") + `"`,
	}, nil
}

// notModified applies If-None-Match, or without it If-Modified-Since (RFC 9110, 13.2.2).
func notModified(r *http.Request, doc memoDoc) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		return etagMatches(inm, doc.etag)
	}
	ims, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return err == nil && !doc.lastModified.After(ims)
}

// feedFormatOf is the format of a path under /feeds/: RSS for a .rss path, else Atom.
func feedFormatOf(path string) (feedFormat, bool) {
	if !strings.HasPrefix(path, "/feeds/") {
		return feedFormat{}, false
	}
	if strings.HasSuffix(path, rssFormat.suffix) {
		return rssFormat, true
	}
	return atomFormat, true
}

// feedNotFound answers 404 in the feed's own content type: a feed reader shows no JSON.
func feedNotFound(c *gin.Context, f feedFormat) {
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusNotFound, f.contentType, []byte(xml.Header+"<error>no such feed</error>\n"))
	c.Abort()
}
