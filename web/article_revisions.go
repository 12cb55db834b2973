package web

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=article_revisions.go -destination=mocks/article_revisions_mock.go -package=mocks

// RevisionService is what the revision handlers need: an article's kept versions and restoring
// one. Who may read or restore is the service's to decide.
type RevisionService interface {
	List(ctx context.Context, cred domain.Credential, slug string, before int32, limit int) (service.RevisionList, error)
	Get(ctx context.Context, cred domain.Credential, slug string, version int32) (domain.ArticleRevision, error)
	Restore(ctx context.Context, cred domain.Credential, slug string, version int32, expected *int32) (domain.ArticleView, error)
}

// RevisionHandler serves /api/articles/:slug/revisions.
type RevisionHandler struct {
	revs RevisionService
	log  *slog.Logger
}

// NewRevisionHandler returns the handler.
func NewRevisionHandler(revs RevisionService, log *slog.Logger) *RevisionHandler {
	return &RevisionHandler{revs: revs, log: log}
}

// revisionJSON is one kept version: the list leaves the body out.
type revisionJSON struct {
	Version     int32     `json:"version"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Body        *string   `json:"body,omitempty"`
	TagList     []string  `json:"tagList"`
	CreatedAt   timestamp `json:"createdAt"`
}

func revisionOf(r domain.ArticleRevision, withBody bool) revisionJSON {
	out := revisionJSON{
		Version: r.Version, Title: r.Title, Description: r.Description, TagList: sortedTags(r.Tags),
		CreatedAt: timestamp(r.CreatedAt),
	}
	if withBody {
		body := r.Body
		out.Body = &body
	}
	return out
}

type revisionsEnvelope struct {
	Revisions  []revisionJSON `json:"revisions"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

type restoreRequest struct {
	// Version is the article's version the client last saw (optional): as on an edit, an article
	// that has moved past it answers 409.
	Version *int32 `json:"version"`
}

// List handles GET /api/articles/:slug/revisions?limit=&cursor=.
func (h *RevisionHandler) List(c *gin.Context) {
	v := &domain.ValidationError{}
	limit := intParam(c, v, "limit", domain.DefaultPageLimit, 1, domain.MaxPageLimit)
	var before int32
	if s := c.Query("cursor"); s != "" {
		seq, ok := decodeSeqCursor(s)
		if !ok || seq > math.MaxInt32 {
			v.Add("cursor", "is not a cursor this API returned")
		}
		before = int32(min(seq, math.MaxInt32))
	}
	if v.OrNil() != nil {
		c.AbortWithStatusJSON(http.StatusUnprocessableEntity, errorBody{Errors: v.Fields})
		return
	}
	l, err := h.revs.List(c.Request.Context(), credentialOf(c), c.Param("slug"), before, limit)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := revisionsEnvelope{Revisions: make([]revisionJSON, len(l.Revisions))}
	for i, r := range l.Revisions {
		out.Revisions[i] = revisionOf(r, false)
	}
	if l.NextBefore != 0 {
		out.NextCursor = encodeSeqCursor(int64(l.NextBefore))
	}
	renderJSON(c, http.StatusOK, out)
}

// Get handles GET /api/articles/:slug/revisions/:version.
func (h *RevisionHandler) Get(c *gin.Context) {
	version, ok := pathVersion(c)
	if !ok {
		return
	}
	r, err := h.revs.Get(c.Request.Context(), credentialOf(c), c.Param("slug"), version)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"revision": revisionOf(r, true)})
}

// Restore handles POST /api/articles/:slug/revisions/:version/restore with an optional body
// {"version": n}.
func (h *RevisionHandler) Restore(c *gin.Context) {
	version, ok := pathVersion(c)
	if !ok {
		return
	}
	var req restoreRequest
	if !bindOptionalJSON(c, &req) {
		return
	}
	a, err := h.revs.Restore(c.Request.Context(), credentialOf(c), c.Param("slug"), version, req.Version)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, articleEnvelope{Article: articleOf(a, true)})
}

// pathVersion reads the :version path parameter; anything but a positive 32-bit integer names no
// version (404, like a bad :id).
func pathVersion(c *gin.Context) (int32, bool) {
	n, err := strconv.ParseInt(c.Param("version"), 10, 32)
	if err != nil || n <= 0 {
		abortWith(c, http.StatusNotFound, "body", "not found")
		return 0, false
	}
	return int32(n), true
}
