package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=media.go -destination=mocks/media_mock.go -package=mocks

// UploadService is what the upload handlers need (service.UploadService).
type UploadService interface {
	Upload(ctx context.Context, cred domain.Credential, r io.Reader, declared int64) (domain.Upload, error)
	List(ctx context.Context, cred domain.Credential, p domain.Page) (service.UploadList, error)
	Delete(ctx context.Context, cred domain.Credential, id int64) error
	// MaxBytes is one file's byte limit (INKWELL_UPLOAD_MAX_BYTES).
	MaxBytes() int64
}

// DefaultUploadRate is the per-user budget of uploads (POST /api/uploads), on top of the write
// budget: decoding and re-encoding an image is the dearest request inkwell serves, and an avatar
// or a few article images an hour is what a writer needs.
var DefaultUploadRate = RateRule{Name: "uploads", Limit: 30, Window: time.Hour}

const (
	uploadsPath = "/api/uploads"
	// multipartOverhead is what the multipart framing around the file may add to a request's body
	// (boundaries, part headers, small extra fields) beyond the file's own limit.
	multipartOverhead = 1 << 20
)

// UploadHandler serves users' uploads.
type UploadHandler struct {
	svc UploadService
	log *slog.Logger
}

// NewUploadHandler returns the handler.
func NewUploadHandler(svc UploadService, log *slog.Logger) *UploadHandler {
	return &UploadHandler{svc: svc, log: log}
}

type uploadVariantJSON struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int64  `json:"bytes"`
}

type uploadJSON struct {
	ID          int64                        `json:"id"`
	URL         string                       `json:"url"`
	ContentType string                       `json:"contentType"`
	Width       int                          `json:"width"`
	Height      int                          `json:"height"`
	Bytes       int64                        `json:"bytes"`
	SHA256      string                       `json:"sha256"`
	Variants    map[string]uploadVariantJSON `json:"variants"`
	CreatedAt   timestamp                    `json:"createdAt"`
}

type uploadEnvelope struct {
	Upload uploadJSON `json:"upload"`
}

type uploadListJSON struct {
	Uploads    []uploadJSON `json:"uploads"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

func uploadOf(u domain.Upload) uploadJSON {
	out := uploadJSON{ID: u.ID, URL: MediaURL(u.Key), ContentType: u.ContentType, Width: u.Width, Height: u.Height,
		Bytes: u.Bytes, SHA256: u.SHA256, Variants: make(map[string]uploadVariantJSON, len(u.Variants)),
		CreatedAt: timestamp(u.CreatedAt)}
	for name, v := range u.Variants {
		out.Variants[name] = uploadVariantJSON{URL: MediaURL(v.Key), Width: v.Width, Height: v.Height, Bytes: v.Bytes}
	}
	return out
}

// overLimit remembers that the body's bound tripped, however the reader above reported it (the
// image decoder may call it a truncated file).
type overLimit struct {
	r    io.Reader
	over bool
}

func (o *overLimit) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		o.over = true
	}
	return n, err
}

// Upload handles POST /api/uploads: a multipart/form-data body whose part "file" is the image.
// The part is streamed into the image processor (never buffered here); the body is bounded at the
// file's limit plus the framing. Not multipart: 415; no part "file": 422; over the limit: 413.
func (h *UploadHandler) Upload(c *gin.Context) {
	max := h.svc.MaxBytes()
	if c.Request.ContentLength > max+multipartOverhead {
		abortWith(c, http.StatusRequestEntityTooLarge, "file", "is larger than the upload limit")
		return
	}
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		abortWith(c, http.StatusUnsupportedMediaType, "body", "must be multipart/form-data with the image in the part \"file\"")
		return
	}
	body := &overLimit{r: http.MaxBytesReader(c.Writer, c.Request.Body, max+multipartOverhead)}
	c.Request.Body = io.NopCloser(body)
	mr, err := c.Request.MultipartReader()
	if err != nil {
		abortWith(c, http.StatusUnsupportedMediaType, "body", "must be multipart/form-data with the image in the part \"file\"")
		return
	}
	for {
		part, err := mr.NextPart()
		if body.over {
			abortWith(c, http.StatusRequestEntityTooLarge, "file", "is larger than the upload limit")
			return
		}
		if errors.Is(err, io.EOF) {
			abortWith(c, http.StatusUnprocessableEntity, "file", "is missing: send the image in the multipart part \"file\"")
			return
		}
		if err != nil {
			abortWith(c, http.StatusUnprocessableEntity, "body", "is not a well-formed multipart body")
			return
		}
		if part.FormName() != "file" {
			_ = part.Close()
			continue
		}
		// The declared size bounds the file for the quota check before anything is decoded.
		u, err := h.svc.Upload(c.Request.Context(), credentialOf(c), part, c.Request.ContentLength)
		if body.over {
			err = domain.ErrMediaTooLarge
		}
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		renderJSON(c, http.StatusCreated, uploadEnvelope{Upload: uploadOf(u)})
		return
	}
}

// List handles GET /api/user/uploads?cursor=&limit=: the viewer's uploads, newest first.
func (h *UploadHandler) List(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	l, err := h.svc.List(c.Request.Context(), credentialOf(c), p)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := uploadListJSON{Uploads: make([]uploadJSON, 0, len(l.Uploads)), NextCursor: encodeCursor(l.NextCursor)}
	for _, u := range l.Uploads {
		out.Uploads = append(out.Uploads, uploadOf(u))
	}
	renderJSON(c, http.StatusOK, out)
}

// Delete handles DELETE /api/uploads/:id: 204; another user's upload is 404.
func (h *UploadHandler) Delete(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if err := h.svc.Delete(c.Request.Context(), credentialOf(c), id); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}
