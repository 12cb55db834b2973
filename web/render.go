package web

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
)

// jsonBuffers holds the buffers answers are encoded into; a buffer grown past maxPooledJSON
// (a rare huge answer) is left to the collector rather than kept.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledJSON = 256 << 10

// renderJSON answers status with v encoded as JSON (as gin's c.JSON does: HTML-safe escaping,
// the same Content-Type), with its Content-Length, in one write. Why not c.JSON: an answer
// longer than net/http's 2 KiB pre-chunking buffer (a list page is ~10 KB) then goes out with
// chunked transfer encoding, which costs another write and flush per request; and encoding into a
// pooled buffer saves allocating the answer each time.
func renderJSON(c *gin.Context, status int, v any) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledJSON {
			jsonBuffers.Put(buf)
		}
	}()
	writeJSONBody(c, status, encodeAnswer(buf, v))
}

// encodeAnswer encodes v into buf as every JSON answer is encoded and returns the bytes (buf's).
func encodeAnswer(buf *bytes.Buffer, v any) []byte {
	enc := json.NewEncoder(buf)
	// No \u003c for <, > and &: an answer is application/json, never inlined into a page, and
	// bodyHtml is made of them (escaping grew an article's answer by a third and its encoding time).
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // a type that cannot be encoded is a bug; the recovery middleware answers 500
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")) // Encode's newline; c.JSON has none
}

// renderAppended answers status with the JSON that appendTo appends into a pooled slice (the
// article answers, built from kept encodings: articleDocs).
func renderAppended(c *gin.Context, status int, appendTo func([]byte) []byte) {
	p := appendBuffers.Get().(*[]byte)
	body := appendTo((*p)[:0])
	writeJSONBody(c, status, body)
	if cap(body) <= maxPooledJSON {
		*p = body
		appendBuffers.Put(p)
	}
}

var appendBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// writeJSONBody writes body, already JSON, with its Content-Type and Content-Length in one write.
func writeJSONBody(c *gin.Context, status int, body []byte) {
	h := c.Writer.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Status(status)
	_, _ = c.Writer.Write(body) // a client gone away is not an error of ours
}
