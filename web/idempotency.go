package web

import (
	"bytes"
	"context"
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
)

//go:generate go tool mockgen -source=idempotency.go -destination=mocks/idempotency_mock.go -package=mocks

// IdempotencyService runs a request at most once per (scope, key); see repository.IdempotencyStore.
type IdempotencyService interface {
	Do(ctx context.Context, scope, key, hash string, run func(ctx context.Context) domain.StoredResponse) (domain.StoredResponse, bool, error)
}

// maxIdempotencyKeyLen bounds the Idempotency-Key header.
const maxIdempotencyKeyLen = 255

// Idempotency makes creating requests safe to retry. With an Idempotency-Key header, the request
// runs inside a transaction that also stores its response under (caller, key); a retry with the
// same key and the same request replays that response byte for byte (Idempotent-Replayed: true),
// the same key with a different request is 422, and the same key while the first is still running
// is 409. Without the header, the request runs as usual.
type Idempotency struct {
	svc IdempotencyService
	log *slog.Logger
}

// NewIdempotency returns the middleware factory.
func NewIdempotency(svc IdempotencyService, log *slog.Logger) *Idempotency {
	return &Idempotency{svc: svc, log: log}
}

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
		// The request's own path, not the route pattern: the same key and body sent to another
		// article's comments is another request (422), not a replay of the first.
		hash := requestHash(c.Request.Method, c.Request.URL.RequestURI(), body)
		rec := &recorder{ResponseWriter: c.Writer, status: http.StatusOK}
		res, replayed, err := m.svc.Do(c.Request.Context(), scope(c), key, hash, func(ctx context.Context) domain.StoredResponse {
			c.Request = c.Request.WithContext(ctx)
			c.Request.Body = io.NopCloser(bytes.NewReader(body))
			orig := c.Writer
			c.Writer = rec
			// Restored even when a handler panics, so the recovery middleware's 500 reaches the
			// client instead of the recorder.
			defer func() { c.Writer = orig }()
			c.Next()
			return domain.StoredResponse{Status: rec.status, Body: rec.buf.Bytes()}
		})
		switch {
		case errors.Is(err, domain.ErrIdempotencyInFlight):
			abortWith(c, http.StatusConflict, "Idempotency-Key", "a request with this key is still being processed; retry later")
			return
		case errors.Is(err, domain.ErrIdempotencyMismatch):
			abortWith(c, http.StatusUnprocessableEntity, "Idempotency-Key", "was already used for a different request")
			return
		case err != nil:
			writeError(c, m.log, err)
			return
		}
		if replayed {
			c.Header("Idempotent-Replayed", "true")
		}
		c.Data(res.Status, "application/json; charset=utf-8", res.Body)
		c.Abort()
	}
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
// the transaction that stores it commits.
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
