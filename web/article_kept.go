package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// keptAnswers keeps the answers of the hottest reads as an anonymous reader gets them: a public
// article (GET /api/articles/:slug) and the first pages of GET /api/articles (the home page's
// global and tag lists, an author's articles). While no cached content changed anywhere in the
// fleet (ContentChanges, as for feeds and sitemaps) and the articles' counts are those an answer
// shows, the kept bytes are the answer, without reading the article or page, its authors and
// counters again. The counts are read per request (from the counters' in-process tier on a warm
// instance), so a like or a read shows exactly as soon as it did before. A signed-in reader of an
// article gets the kept bytes with their own three flags written in (FlagsOf), and a signed-in
// read keeps the answer too (the view without the flags); signed-in readers of lists are never
// served from it (their flags and blocks differ per article).
type keptAnswers struct {
	changes  ContentChanges
	articles *docMemo
	lists    *docMemo
}

// Budgets of the kept answers (an article answer is a few KB, a first page of twenty about 10 KB).
const (
	keptArticleBytes = 16 << 20
	keptListBytes    = 8 << 20
)

func newKeptAnswers(changes ContentChanges) *keptAnswers {
	if changes == nil {
		return nil
	}
	return &keptAnswers{changes: changes, articles: newDocMemo(keptArticleBytes), lists: newDocMemo(keptListBytes)}
}

// keptArticles is what a kept answer shows of its articles: their ids and counts (checked before
// it is served), and for a single article its author and where its flags are (flagOffsets).
type keptArticles struct {
	ids    []int64
	counts []domain.Counters
	author int64
	flags  flagOffsets
}

// keptDoc is an answer to keep: its bytes, under version, with the articles it shows.
func keptDoc(version uint64, body []byte, views ...domain.ArticleView) memoDoc {
	d := memoDoc{version: version, tracked: true, body: body}
	d.articles.ids, d.articles.counts = make([]int64, len(views)), make([]domain.Counters, len(views))
	for i, v := range views {
		d.articles.ids[i], d.articles.counts[i] = v.ID, v.Counters
	}
	return d
}

// serveKeptArticle answers a read of a public article from the memo (recording the read, as the
// service does), or reads it as usual and keeps the answer an anonymous reader gets (a signed-in
// reader's view without their flags). It reports false when the memo cannot answer now (the
// caller reads the article as usual).
func (h *ArticleHandler) serveKeptArticle(c *gin.Context, viewer int64, slug string) bool {
	if h.kept == nil {
		return false
	}
	ctx := c.Request.Context()
	version, d, hit, ok := h.lookupKept(ctx, h.kept.articles, slug)
	if !ok {
		return false
	}
	if hit {
		id := d.articles.ids[0]
		if viewer == 0 {
			h.articles.RecordRead(0, id)
			writeJSONBody(c, http.StatusOK, d.body)
			return true
		}
		flags, err := h.articles.FlagsOf(ctx, viewer, id, d.articles.author)
		if err != nil {
			return false // read as usual, which answers the error if it persists
		}
		h.articles.RecordRead(viewer, id)
		renderAppended(c, http.StatusOK, func(b []byte) []byte { return spliceFlags(b, d.body, d.articles.flags, flags) })
		return true
	}
	v, err := h.articles.Get(ctx, viewer, slug)
	if err != nil {
		writeError(c, h.log, err)
		return true
	}
	if !v.Public() { // its author reading a draft, a withdrawn or a hidden article: nothing to keep
		h.respondOne(c, http.StatusOK, v, nil)
		return true
	}
	anonymous := v
	anonymous.Favorited, anonymous.Collected, anonymous.Author.Following = false, false, false
	d = keptDoc(version, nil, anonymous)
	d.body = h.docs.appendOneAt(nil, anonymous, &d.articles.flags)
	d.articles.author = v.AuthorID
	h.kept.articles.put(slug, d)
	if viewer == 0 {
		writeJSONBody(c, http.StatusOK, d.body)
	} else {
		h.respondOne(c, http.StatusOK, v, nil)
	}
	return true
}

// spliceFlags appends body, an anonymous reader's article answer (every flag false), with the
// viewer's flags written in at their offsets.
func spliceFlags(b, body []byte, at flagOffsets, f service.ViewerFlags) []byte {
	prev := 0
	for i, on := range [...]bool{f.Favorited, f.Following, f.Collected} {
		b = append(b, body[prev:at[i]]...)
		b = strconv.AppendBool(b, on)
		prev = at[i] + len("false")
	}
	return append(b, body[prev:]...)
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
	if h.kept == nil || !ok {
		return false
	}
	ctx := c.Request.Context()
	version, d, hit, ok := h.lookupKept(ctx, h.kept.lists, key)
	if !ok {
		return false
	}
	if hit {
		writeJSONBody(c, http.StatusOK, d.body)
		return true
	}
	l, err := h.articles.List(ctx, 0, in)
	if err != nil {
		writeError(c, h.log, err)
		return true
	}
	d = keptDoc(version, h.docs.appendList(nil, l), l.Articles...)
	h.kept.lists.put(key, d)
	writeJSONBody(c, http.StatusOK, d.body)
	return true
}

// lookupKept returns the change version an answer built now is kept under (read before building:
// a change during the build moves it) and key's kept answer in memo when it is current and its
// counts are unchanged (hit). ok false: changes cannot be followed now, so nothing is kept or
// served.
func (h *ArticleHandler) lookupKept(ctx context.Context, memo *docMemo, key string) (version uint64, d memoDoc, hit, ok bool) {
	if version, ok = h.kept.changes.Version(); !ok {
		return 0, memoDoc{}, false, false
	}
	d, hit = memo.current(key, version)
	return version, d, hit && h.countsUnchanged(ctx, d), true
}

// countsUnchanged reports whether the articles d shows still have the counts it shows (false when
// they cannot be read: the answer is built again, with the error if it persists).
func (h *ArticleHandler) countsUnchanged(ctx context.Context, d memoDoc) bool {
	if len(d.articles.ids) == 0 {
		return true
	}
	now, err := h.articles.Counters(ctx, d.articles.ids)
	if err != nil {
		return false
	}
	for i, id := range d.articles.ids {
		if now[id] != d.articles.counts[i] {
			return false
		}
	}
	return true
}
