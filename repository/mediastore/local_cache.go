package mediastore

import (
	"bytes"
	"container/list"
	"io"
	"sync"
	"time"
)

// Small objects (variants: avatars, thumbnails, most covers) are kept in memory once read, so
// serving one costs a stat and one write instead of an open, reads through a copy buffer and a
// close. An entry is used only while the file still has the size and modification time it was
// read with: the stat on every request is what keeps a fleet sharing the directory coherent (an
// object one instance deletes is gone from every instance on the next request).
const (
	localCacheObjectMax = 256 << 10 // larger objects are served from the file each time
	localCacheBytes     = 64 << 20  // in all, least recently served evicted first
)

type cachedObject struct {
	key     string
	data    []byte
	size    int64
	modTime time.Time
}

// objectCache is a byte-bounded LRU of small objects' contents.
type objectCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // front: most recently served; values are *cachedObject
	byKey map[string]*list.Element
}

func newObjectCache(maxBytes int64) *objectCache {
	return &objectCache{max: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns key's bytes if they were read from a file of this size and modification time.
func (c *objectCache) get(key string, size int64, modTime time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	o := e.Value.(*cachedObject)
	if o.size != size || !o.modTime.Equal(modTime) {
		c.remove(e)
		return nil, false
	}
	c.order.MoveToFront(e)
	return o.data, true
}

func (c *objectCache) put(key string, data []byte, modTime time.Time) {
	n := int64(len(data))
	if n > localCacheObjectMax || n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
	for c.used+n > c.max {
		c.remove(c.order.Back())
	}
	c.byKey[key] = c.order.PushFront(&cachedObject{key: key, data: data, size: n, modTime: modTime})
	c.used += n
}

func (c *objectCache) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
}

func (c *objectCache) remove(e *list.Element) {
	o := c.order.Remove(e).(*cachedObject)
	delete(c.byKey, o.key)
	c.used -= o.size
}

// bytesObject is a cached object's content as a domain.MediaObject's ReadSeekCloser.
type bytesObject struct{ *bytes.Reader }

func (bytesObject) Close() error { return nil }

var _ io.ReadSeekCloser = bytesObject{}
