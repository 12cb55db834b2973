package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// maxIdempotencyKeyLen bounds the Idempotency-Key header.
const maxIdempotencyKeyLen = 255

// Idempotency reads the Idempotency-Key of a creating request. It only parses: it checks the
// header, fingerprints the request (method, path, canonical body) and leaves the key for the
// handler, whose use case stores the answer with its write (service.Idempotent). A retry with
// the same key and request gets that answer byte for byte (Idempotent-Replayed: true), the same
// key with another request is 422, and the same key while the first is still running is 409
// (after a short wait for it). Without the header, the request runs as usual. The one answer not
// replayed byte for byte is a registration's: no token is stored, and each replay carries a new
// session (service.UserService.RegisterIdempotent).
type Idempotency struct{}

// NewIdempotency returns the middleware factory.
func NewIdempotency() *Idempotency { return &Idempotency{} }

// idempotencyKeyName is where the middleware leaves the parsed key in the gin context.
const idempotencyKeyName = "inkwell.idempotency-key"

// ForUser scopes keys to the signed-in user (use after Authenticator.Required).
func (m *Idempotency) ForUser() gin.HandlerFunc {
	return m.handle(func(c *gin.Context) string { return "user:" + strconv.FormatInt(viewerID(c), 10) })
}

// ForClient scopes keys to the client IP (registration, where there is no user yet).
func (m *Idempotency) ForClient() gin.HandlerFunc {
	return m.handle(func(c *gin.Context) string { return "ip:" + c.ClientIP() })
}

func (m *Idempotency) handle(scope func(*gin.Context) string) gin.HandlerFunc {
	return func(c *gin.Context) {
		key := c.GetHeader("Idempotency-Key")
		if key == "" {
			c.Next()
			return
		}
		if len(key) > maxIdempotencyKeyLen {
			abortWith(c, http.StatusBadRequest, "Idempotency-Key", "must be at most 255 characters")
			return
		}
		if !isPlainText(key) {
			abortWith(c, http.StatusBadRequest, "Idempotency-Key", "must be UTF-8 text without NUL characters")
			return
		}
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				abortWith(c, http.StatusRequestEntityTooLarge, "body", "request body is too large")
				return
			}
			abortWith(c, http.StatusBadRequest, "body", "could not read the request body")
			return
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		// The request's own path, not the route pattern: the same key and body sent to another
		// article's comments is another request (422), not a replay of the first.
		c.Set(idempotencyKeyName, service.IdempotencyKey{
			Scope: scope(c), Key: key, RequestHash: requestHash(c.Request.Method, c.Request.URL.RequestURI(), body),
		})
		c.Next()
	}
}

// idempotencyKeyOf returns the request's parsed Idempotency-Key, if it was sent one.
func idempotencyKeyOf(c *gin.Context) (service.IdempotencyKey, bool) {
	v, ok := c.Get(idempotencyKeyName)
	if !ok {
		return service.IdempotencyKey{}, false
	}
	k, ok := v.(service.IdempotencyKey)
	return k, ok
}

// idempotent builds a use case's service.Idempotent: respond is the handler's own answer for an
// outcome, captured rather than sent, so the stored answer is exactly what a request without a
// key would have got.
func idempotent[T any](c *gin.Context, key service.IdempotencyKey, respond func(v T, err error)) service.Idempotent[T] {
	return service.Idempotent[T]{Key: key, Render: func(v T, err error) domain.StoredResponse {
		return capture(c, func() { respond(v, err) })
	}}
}

// capture runs respond against a recorder instead of the client and returns what it wrote.
func capture(c *gin.Context, respond func()) domain.StoredResponse {
	rec := &recorder{ResponseWriter: c.Writer, status: http.StatusOK}
	orig := c.Writer
	c.Writer = rec
	// Restored even when respond panics, so the recovery middleware's 500 reaches the client.
	defer func() { c.Writer = orig }()
	respond()
	return domain.StoredResponse{Status: rec.status, Body: bytes.Clone(rec.buf.Bytes())}
}

// writeStored sends the answer of a keyed request, or what keeps it from having one.
func writeStored(c *gin.Context, log *slog.Logger, res domain.StoredResponse, replayed bool, err error) {
	switch {
	case errors.Is(err, domain.ErrIdempotencyInFlight):
		abortWith(c, http.StatusConflict, "Idempotency-Key", "a request with this key is still being processed; retry later")
		return
	case errors.Is(err, domain.ErrIdempotencyMismatch):
		abortWith(c, http.StatusUnprocessableEntity, "Idempotency-Key", "was already used for a different request")
		return
	case err != nil:
		writeError(c, log, err)
		return
	}
	if replayed {
		c.Header("Idempotent-Replayed", "true")
	}
	c.Data(res.Status, "application/json; charset=utf-8", res.Body)
	c.Abort()
}

// requestHash fingerprints a request: method, path and body, the body canonicalized (object keys
// sorted, insignificant whitespace dropped) when it is JSON, so a retry that re-encodes the same
// JSON still matches.
func requestHash(method, path string, body []byte) string {
	canonical := body
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canonical = b
		}
	}
	h := sha256.New()
	h.Write([]byte(method + "\n" + path + "\n"))
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}

// recorder holds a response back: under an idempotency key nothing may reach the client before
// the unit of work that stores it commits.
type recorder struct {
	gin.ResponseWriter
	buf     bytes.Buffer
	status  int
	written bool
}

func (r *recorder) WriteHeader(code int) { r.status, r.written = code, true }
func (r *recorder) WriteHeaderNow()      { r.written = true }
func (r *recorder) Write(b []byte) (int, error) {
	r.written = true
	return r.buf.Write(b)
}
func (r *recorder) WriteString(s string) (int, error) {
	r.written = true
	return r.buf.WriteString(s)
}
func (r *recorder) Status() int   { return r.status }
func (r *recorder) Size() int     { return r.buf.Len() }
func (r *recorder) Written() bool { return r.written }
func (r *recorder) Flush()        {}
