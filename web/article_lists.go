package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// listMemo keeps the anonymous answers of GET /api/articles's first pages (the home page's global
// and tag lists, an author's articles): while no cached content changed anywhere in the fleet
// (ContentChanges, as for feeds and sitemaps) and the articles' counts are those it shows, the
// kept bytes are the answer, without reading the page, its authors and its flags again. The
// counts are read per request (from the counters' in-process tier on a warm instance), so a like
// or a read shows exactly as soon as it did before. Signed-in viewers are never served from it:
// their flags and blocks differ.
type listMemo struct {
	changes ContentChanges
	docs    *docMemo
}

// listMemoBytes bounds the kept list answers (a first page of twenty is about 10 KB).
const listMemoBytes = 8 << 20

func newListMemo(changes ContentChanges, maxBytes int) *listMemo {
	if changes == nil {
		return nil
	}
	return &listMemo{changes: changes, docs: newDocMemo(maxBytes)}
}

// listKeptKey is the memo key of in's answer, and whether it may be kept at all: first pages
// (no offset, no cursor) not filtered by who favorited (a like changes that list without
// changing a cached entry).
func listKeptKey(in service.ListInput) (string, bool) {
	if in.Page.Offset != 0 || in.Page.Cursor != nil || in.Favorited != "" {
		return "", false
	}
	return in.Tag + "\x00" + in.Author + "\x00" + strconv.Itoa(in.Page.Limit), true
}

// serveKeptList answers an anonymous list request from the memo, or builds the answer and keeps
// it. It reports false when the request is not one the memo answers (the caller builds it).
func (h *ArticleHandler) serveKeptList(c *gin.Context, in service.ListInput) bool {
	key, ok := listKeptKey(in)
	if h.lists == nil || !ok {
		return false
	}
	version, ok := h.lists.changes.Version() // before building: a change during the build moves it
	if !ok {
		return false
	}
	ctx := c.Request.Context()
	if d, ok := h.lists.docs.current(key, version); ok && h.countsUnchanged(ctx, d) {
		writeJSONBody(c, http.StatusOK, d.body)
		return true
	}
	l, err := h.articles.List(ctx, 0, in)
	if err != nil {
		writeError(c, h.log, err)
		return true
	}
	d := memoDoc{version: version, tracked: true, body: h.docs.appendList(nil, l)}
	d.articles, d.counts = make([]int64, len(l.Articles)), make([]domain.Counters, len(l.Articles))
	for i, v := range l.Articles {
		d.articles[i], d.counts[i] = v.ID, v.Counters
	}
	h.lists.docs.put(key, d)
	writeJSONBody(c, http.StatusOK, d.body)
	return true
}

// countsUnchanged reports whether the articles d shows still have the counts it shows (false when
// they cannot be read: the answer is built again, with the error if it persists).
func (h *ArticleHandler) countsUnchanged(ctx context.Context, d memoDoc) bool {
	if len(d.articles) == 0 {
		return true
	}
	now, err := h.articles.Counters(ctx, d.articles)
	if err != nil {
		return false
	}
	for i, id := range d.articles {
		if now[id] != d.counts[i] {
			return false
		}
	}
	return true
}
