package web

import (
	"sync"
	"time"
)

// ContentChanges says whether documents built from the public content (the feeds, the sitemaps,
// anonymous article lists)
// may still be served as built: a document built under one version is current while Version
// returns that version. The caches implement it (cache.Changes): every change of a cached key on
// any instance moves it on every instance, and so does time, at least every half in-process TTL.
type ContentChanges interface {
	// Version returns the current version; ok false means changes cannot be followed now, and
	// no document may be served from a memo.
	Version() (v uint64, ok bool)
}

// memoDoc is one encoded document: its bytes and validators, and the change version it is
// current under (0 and untracked: only reused after its content was checked again).
type memoDoc struct {
	version      uint64
	tracked      bool
	stamp        uint64 // the content's own stamp (feeds), to keep its ETag when nothing changed
	body         []byte
	etag         string
	lastModified time.Time
	articles     keptArticles // what an article answer kept for anonymous readers shows (keptAnswers)
}

// docMemo keeps the last encoding of each path, within a budget of bytes (past it arbitrary
// entries go). It holds nothing another instance must see: an entry is served only under the
// change version it was built in (ContentChanges), which moves on every instance with every
// change.
type docMemo struct {
	maxBytes int

	mu    sync.Mutex
	docs  map[string]memoDoc
	bytes int
}

func newDocMemo(maxBytes int) *docMemo {
	return &docMemo{maxBytes: maxBytes, docs: map[string]memoDoc{}}
}

// current returns path's document if it was built under version v.
func (m *docMemo) current(path string, v uint64) (memoDoc, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.docs[path]
	return d, ok && d.tracked && d.version == v
}

// get returns path's document whatever its version.
func (m *docMemo) get(path string) (memoDoc, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.docs[path]
	return d, ok
}

// put keeps d as path's document. One larger than a quarter of the budget is not kept.
func (m *docMemo) put(path string, d memoDoc) {
	if len(d.body) > m.maxBytes/4 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.docs[path]; ok {
		m.bytes -= len(old.body)
		delete(m.docs, path)
	}
	for k, old := range m.docs {
		if m.bytes+len(d.body) <= m.maxBytes {
			break
		}
		m.bytes -= len(old.body)
		delete(m.docs, k)
	}
	m.docs[path] = d
	m.bytes += len(d.body)
}
