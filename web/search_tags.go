package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
)

//go:generate go tool mockgen -source=search_tags.go -destination=mocks/search_tags_mock.go -package=mocks

// TagSearchService is what the tag autocomplete handler needs.
type TagSearchService interface {
	Tags(ctx context.Context, prefix string, limit int) ([]string, error)
}

// TagSearchHandler serves GET /api/search/tags.
type TagSearchHandler struct {
	tags TagSearchService
	log  *slog.Logger
}

// NewTagSearchHandler returns the handler.
func NewTagSearchHandler(tags TagSearchService, log *slog.Logger) *TagSearchHandler {
	return &TagSearchHandler{tags: tags, log: log}
}

// Tags handles GET /api/search/tags?q=&limit=: the tags in use starting with q
// (case-insensitively), the most used first, in the shape of GET /api/tags.
func (h *TagSearchHandler) Tags(c *gin.Context) {
	q, limit, ok := lookupParams(c)
	if !ok {
		return
	}
	tags, err := h.tags.Tags(c.Request.Context(), q, limit)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"tags": tags})
}
