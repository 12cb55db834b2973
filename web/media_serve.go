package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=media_serve.go -destination=mocks/media_serve_mock.go -package=mocks

// MediaFiles is the media store as GET /media/:key reads it.
type MediaFiles interface {
	// Presign returns a URL the client may GET key from for a short while (S3); "" when the store
	// serves its objects through Open (a local directory). A key that is not an object key is
	// domain.ErrNotFound.
	Presign(ctx context.Context, key string) (string, error)
	// Open returns the object's bytes, size and modification time; domain.ErrNotFound when it is
	// not there or key is not an object key.
	Open(ctx context.Context, key string) (domain.MediaObject, error)
}

// mediaPath is where objects are served, outside /api: their URLs are the same whatever the store.
const mediaPath = domain.MediaPathPrefix

// MediaURL is the public URL of an object: relative, so it works behind any host and scheme.
func MediaURL(key string) string { return mediaPath + key }

// mediaCacheControl: a key is the sha256 of its bytes, which never change.
const mediaCacheControl = "public, max-age=31536000, immutable"

// presignedRedirectCache bounds how long a client or CDN may reuse the redirect: well inside the
// presigned URL's 15 minutes.
const presignedRedirectCache = "public, max-age=300"

// MediaHandler serves GET /media/:key.
type MediaHandler struct {
	files MediaFiles
	log   *slog.Logger
}

// NewMediaHandler returns the handler.
func NewMediaHandler(files MediaFiles, log *slog.Logger) *MediaHandler {
	return &MediaHandler{files: files, log: log}
}

// Serve answers GET /media/:key: with a local store the bytes (ranges, ETag, Last-Modified, 304s
// through http.ServeContent) under headers that keep a browser from reading them as anything but
// the image their key names; with S3 a 302 to a presigned URL. A key that is not an object key
// is 404 before the store is asked.
func (h *MediaHandler) Serve(c *gin.Context) {
	key := c.Param("key")
	if !domain.ValidMediaKey(key) {
		abortWith(c, http.StatusNotFound, "media", "no such media object")
		return
	}
	ctx := c.Request.Context()
	url, err := h.files.Presign(ctx, key)
	if err == nil && url != "" {
		c.Header("Cache-Control", presignedRedirectCache)
		c.Redirect(http.StatusFound, url)
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	obj, err := h.files.Open(ctx, key)
	if err != nil {
		h.fail(c, err)
		return
	}
	defer obj.Content.Close()
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", domain.MediaContentType(key))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", "default-src 'none'")
	hdr.Set("Cache-Control", mediaCacheControl)
	hdr.Set("ETag", `"`+key[:64]+`"`)
	if obj.Data != nil && plainGet(c.Request) {
		// What http.ServeContent would answer, without its seeks and copy buffer: the common
		// case of a small variant the store holds in memory.
		hdr.Set("Last-Modified", obj.ModTime.UTC().Format(http.TimeFormat))
		hdr.Set("Accept-Ranges", "bytes")
		hdr.Set("Content-Length", strconv.Itoa(len(obj.Data)))
		c.Writer.WriteHeader(http.StatusOK)
		_, _ = c.Writer.Write(obj.Data)
		return
	}
	http.ServeContent(c.Writer, c.Request, key, obj.ModTime, obj.Content)
}

// plainGet: a GET with no range and no condition, which http.ServeContent would answer with
// the whole object.
func plainGet(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	for _, h := range [...]string{"Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	return true
}

func (h *MediaHandler) fail(c *gin.Context, err error) {
	if errors.Is(err, domain.ErrNotFound) {
		abortWith(c, http.StatusNotFound, "media", "no such media object")
		return
	}
	writeError(c, h.log, err)
}
