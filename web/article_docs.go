package web

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// articleDocs writes article answers from encodings kept per article. Most of an article's JSON
// (its text, body HTML, tags, times, status) changes only when the article does, yet encoding it
// was most of a cached read's cost; the rest (counters, the viewer's flags, the author's profile)
// is a few dozen bytes appended per request. An article's segments are kept with the fields they
// were encoded from and reused only while the article in hand has the same ones, so what is
// written is always what encoding the view would write (TestArticleDocs_WriteWhatEncodingWrites):
// the memo needs no invalidation and holds nothing another instance must see. Which article a
// reader gets, and when an edit shows, stays the business of the service and its caches.
type articleDocs struct {
	shardBytes int
	shards     [articleDocShards]articleDocShard
}

const (
	articleDocShards = 16
	// articleDocsBytes bounds what the memo keeps (segments and the article text they hold on to);
	// past it arbitrary entries go.
	articleDocsBytes = 32 << 20
)

type articleDocShard struct {
	mu    sync.RWMutex
	docs  map[articleDocKey]*articleDoc
	bytes int
}

type articleDocKey struct {
	id       int64
	withBody bool
}

// articleDoc is one article's encoded segments: head is `"slug":…,"updatedAt":"…"`, mid
// `"status":…,"version":…`, tail the optional fields (moderation, coverImage, publishAt) with
// their leading comma, or nothing. src is the article they were encoded from (its body dropped
// from a summary's).
type articleDoc struct {
	src             domain.Article
	head, mid, tail []byte
}

func (d *articleDoc) size() int {
	return len(d.head) + len(d.mid) + len(d.tail) + len(d.src.Body) + len(d.src.BodyHTML) + 256
}

func newArticleDocs(maxBytes int) *articleDocs {
	m := &articleDocs{shardBytes: maxBytes / articleDocShards}
	for i := range m.shards {
		m.shards[i].docs = map[articleDocKey]*articleDoc{}
	}
	return m
}

// flagOffsets are where an article answer's `favorited`, `author.following` and `collected` values
// start, in that (the document's) order.
type flagOffsets [3]int

// appendArticle appends v as articleOf(v, withBody) encodes: `{…}`. With at not nil, it records
// where the flags' values were written.
func (m *articleDocs) appendArticle(b []byte, v domain.ArticleView, withBody bool, at *flagOffsets) []byte {
	d := m.doc(v.Article, withBody)
	if at == nil {
		at = new(flagOffsets) // stays on the stack
	}
	b = append(b, '{')
	b = append(b, d.head...)
	b = append(b, `,"favorited":`...)
	at[0] = len(b)
	b = strconv.AppendBool(b, v.Favorited)
	b = append(b, `,"favoritesCount":`...)
	b = strconv.AppendInt(b, v.Counters.Likes, 10)
	b = append(b, `,"author":{"username":`...)
	b = appendJSONString(b, v.Author.Username)
	b = append(b, `,"bio":`...)
	b = appendJSONString(b, v.Author.Bio)
	b = append(b, `,"image":`...)
	b = appendJSONString(b, v.Author.Image)
	b = append(b, `,"following":`...)
	at[1] = len(b)
	b = strconv.AppendBool(b, v.Author.Following)
	b = append(b, `},`...)
	b = append(b, d.mid...)
	b = append(b, `,"readsCount":`...)
	b = strconv.AppendInt(b, v.Counters.Reads, 10)
	b = append(b, `,"collected":`...)
	at[2] = len(b)
	b = strconv.AppendBool(b, v.Collected)
	b = append(b, `,"collectsCount":`...)
	b = strconv.AppendInt(b, v.Counters.Collects, 10)
	b = append(b, d.tail...)
	return append(b, '}')
}

// appendOne appends the single-article answer, as articleEnvelope{articleOf(v, true)} encodes.
func (m *articleDocs) appendOne(b []byte, v domain.ArticleView) []byte {
	return m.appendOneAt(b, v, nil)
}

// appendOneAt is appendOne recording where the flags' values were written (at not nil).
func (m *articleDocs) appendOneAt(b []byte, v domain.ArticleView, at *flagOffsets) []byte {
	b = append(b, `{"article":`...)
	b = m.appendArticle(b, v, true, at)
	return append(b, '}')
}

// appendList appends a list answer, as listResponse(l) encodes.
func (m *articleDocs) appendList(b []byte, l service.ArticleList) []byte {
	b = append(b, `{"articles":[`...)
	for i, v := range l.Articles {
		if i > 0 {
			b = append(b, ',')
		}
		b = m.appendArticle(b, v, false, nil)
	}
	b = append(b, `],"articlesCount":`...)
	b = strconv.AppendInt(b, l.Total, 10)
	if c := encodeCursor(l.NextCursor); c != "" {
		b = append(b, `,"nextCursor":`...)
		b = appendJSONString(b, c)
	}
	return append(b, '}')
}

// doc returns a's segments, from the memo when they were encoded from the same fields.
func (m *articleDocs) doc(a domain.Article, withBody bool) *articleDoc {
	key := articleDocKey{a.ID, withBody}
	s := &m.shards[uint64(a.ID)*0x9e3779b97f4a7c15>>60%articleDocShards]
	s.mu.RLock()
	d := s.docs[key]
	s.mu.RUnlock()
	if d != nil && sameEncoding(d.src, a, withBody) {
		return d
	}
	d = encodeArticleDoc(a, withBody)
	size := d.size()
	if size > m.shardBytes/4 {
		return d // a huge article is encoded each time rather than crowd out the rest
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.docs[key]; old != nil {
		s.bytes -= old.size()
		delete(s.docs, key)
	}
	for k, old := range s.docs {
		if s.bytes+size <= m.shardBytes {
			break
		}
		s.bytes -= old.size()
		delete(s.docs, k)
	}
	s.docs[key] = d
	s.bytes += size
	return d
}

// sameEncoding reports whether the segments encoded from a are those b would encode to.
// Strings of one cached entry share their bytes, so comparing them is mostly a pointer check.
func sameEncoding(a, b domain.Article, withBody bool) bool {
	return a.Slug == b.Slug && a.Title == b.Title && a.Description == b.Description &&
		(!withBody || a.Body == b.Body && a.BodyHTML == b.BodyHTML) &&
		slices.Equal(a.Tags, b.Tags) && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.Status == b.Status && a.Version == b.Version && a.Moderation == b.Moderation &&
		a.CoverImage == b.CoverImage && samePublishAt(a.PublishAt, b.PublishAt)
}

func samePublishAt(a, b *time.Time) bool {
	return a == b || a != nil && b != nil && a.Equal(*b)
}

// The segments' shapes: articleJSON's fields in its order, cut around the per-request ones.
type (
	articleHeadJSON struct {
		Slug        string    `json:"slug"`
		Title       string    `json:"title"`
		Description string    `json:"description"`
		Body        *string   `json:"body,omitempty"`
		BodyHTML    *string   `json:"bodyHtml,omitempty"`
		TagList     []string  `json:"tagList"`
		CreatedAt   timestamp `json:"createdAt"`
		UpdatedAt   timestamp `json:"updatedAt"`
	}
	articleMidJSON struct {
		Status  string `json:"status"`
		Version int32  `json:"version"`
	}
	articleTailJSON struct {
		Moderation *moderationJSON `json:"moderation,omitempty"`
		CoverImage string          `json:"coverImage,omitempty"`
		PublishAt  *timestamp      `json:"publishAt,omitempty"`
	}
)

func encodeArticleDoc(a domain.Article, withBody bool) *articleDoc {
	j := articleOf(domain.ArticleView{Article: a}, withBody)
	d := &articleDoc{src: a}
	if !withBody {
		d.src.Body, d.src.BodyHTML = "", ""
	}
	d.head = encodeFields(articleHeadJSON{
		Slug: j.Slug, Title: j.Title, Description: j.Description, Body: j.Body, BodyHTML: j.BodyHTML,
		TagList: j.TagList, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt,
	})
	d.mid = encodeFields(articleMidJSON{Status: j.Status, Version: j.Version})
	if tail := encodeFields(articleTailJSON{Moderation: j.Moderation, CoverImage: j.CoverImage, PublishAt: j.PublishAt}); len(tail) > 0 {
		d.tail = append([]byte{','}, tail...)
	}
	return d
}

// encodeFields encodes v as renderJSON does and returns its fields without the braces.
func encodeFields(v any) []byte {
	var buf bytes.Buffer
	out := encodeAnswer(&buf, v)
	return bytes.Clone(out[1 : len(out)-1])
}
