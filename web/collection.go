package web

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=collection.go -destination=mocks/collection_mock.go -package=mocks

// CollectionService is what the collection handlers need.
type CollectionService interface {
	Create(ctx context.Context, viewerID int64, in service.CollectionInput) (domain.Collection, error)
	List(ctx context.Context, viewerID int64) ([]domain.Collection, error)
	Update(ctx context.Context, viewerID, id int64, in service.CollectionInput) (domain.Collection, error)
	Delete(ctx context.Context, viewerID, id int64) error
	Collect(ctx context.Context, viewerID int64, slug string, collectionID int64) (domain.ArticleView, error)
	Uncollect(ctx context.Context, viewerID int64, slug string, collectionID int64) (domain.ArticleView, error)
	Articles(ctx context.Context, viewerID, id int64, p domain.Page) (service.ArticleList, error)
}

// HistoryService is what the reading-history handler needs.
type HistoryService interface {
	History(ctx context.Context, viewerID int64, p domain.Page) (service.ArticleList, error)
}

// CollectionHandler serves collection folders, collecting, and the reading history.
type CollectionHandler struct {
	cols    CollectionService
	history HistoryService
	log     *slog.Logger
}

// NewCollectionHandler returns the handler.
func NewCollectionHandler(cols CollectionService, history HistoryService, log *slog.Logger) *CollectionHandler {
	return &CollectionHandler{cols: cols, history: history, log: log}
}

type collectionJSON struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	ArticlesCount int64     `json:"articlesCount"`
	CreatedAt     timestamp `json:"createdAt"`
	UpdatedAt     timestamp `json:"updatedAt"`
}

func collectionOf(c domain.Collection) collectionJSON {
	return collectionJSON{ID: c.ID, Name: c.Name, Description: c.Description, ArticlesCount: c.ArticleCount,
		CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt)}
}

type collectionRequest struct {
	Collection struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	} `json:"collection"`
}

// Create handles POST /api/collections.
func (h *CollectionHandler) Create(c *gin.Context) {
	var req collectionRequest
	if !bindJSON(c, &req) {
		return
	}
	col, err := h.cols.Create(c.Request.Context(), viewerID(c), service.CollectionInput{Name: req.Collection.Name, Description: req.Collection.Description})
	h.respond(c, http.StatusCreated, col, err)
}

// List handles GET /api/collections.
func (h *CollectionHandler) List(c *gin.Context) {
	cols, err := h.cols.List(c.Request.Context(), viewerID(c))
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := make([]collectionJSON, len(cols))
	for i, col := range cols {
		out[i] = collectionOf(col)
	}
	renderJSON(c, http.StatusOK, gin.H{"collections": out})
}

// Update handles PATCH /api/collections/:id.
func (h *CollectionHandler) Update(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req collectionRequest
	if !bindJSON(c, &req) {
		return
	}
	col, err := h.cols.Update(c.Request.Context(), viewerID(c), id, service.CollectionInput{Name: req.Collection.Name, Description: req.Collection.Description})
	h.respond(c, http.StatusOK, col, err)
}

// Delete handles DELETE /api/collections/:id.
func (h *CollectionHandler) Delete(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if err := h.cols.Delete(c.Request.Context(), viewerID(c), id); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

type collectRequest struct {
	CollectionID int64 `json:"collectionId"`
}

// Collect handles POST /api/articles/:slug/collect with {"collectionId": n}.
func (h *CollectionHandler) Collect(c *gin.Context) {
	var req collectRequest
	if !bindJSON(c, &req) {
		return
	}
	v, err := h.cols.Collect(c.Request.Context(), viewerID(c), c.Param("slug"), req.CollectionID)
	h.respondArticle(c, v, err)
}

// Uncollect handles DELETE /api/articles/:slug/collect with {"collectionId": n} in the body or,
// for clients that cannot send a body with DELETE, ?collectionId=n.
func (h *CollectionHandler) Uncollect(c *gin.Context) {
	var req collectRequest
	if q := c.Query("collectionId"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil {
			abortWith(c, http.StatusUnprocessableEntity, "collectionId", "must be a whole number")
			return
		}
		req.CollectionID = n
	} else if !bindJSON(c, &req) {
		return
	}
	v, err := h.cols.Uncollect(c.Request.Context(), viewerID(c), c.Param("slug"), req.CollectionID)
	h.respondArticle(c, v, err)
}

// Articles handles GET /api/collections/:id/articles?cursor=&limit=.
func (h *CollectionHandler) Articles(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	p, ok := pageParams(c)
	if !ok {
		return
	}
	l, err := h.cols.Articles(c.Request.Context(), viewerID(c), id, p)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, listResponse(l))
}

// History handles GET /api/user/history?cursor=&limit=.
func (h *CollectionHandler) History(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	l, err := h.history.History(c.Request.Context(), viewerID(c), p)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, listResponse(l))
}

func (h *CollectionHandler) respond(c *gin.Context, status int, col domain.Collection, err error) {
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, status, gin.H{"collection": collectionOf(col)})
}

func (h *CollectionHandler) respondArticle(c *gin.Context, v domain.ArticleView, err error) {
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, articleEnvelope{Article: articleOf(v, true)})
}

// pathID reads the :id path parameter; anything but a positive integer names nothing (404).
func pathID(c *gin.Context) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		abortWith(c, http.StatusNotFound, "body", "not found")
		return 0, false
	}
	return id, true
}
