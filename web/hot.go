package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=hot.go -destination=mocks/hot_mock.go -package=mocks

// HotService is what the hot-list handler needs.
type HotService interface {
	Hot(ctx context.Context, viewerID int64, limit int) ([]service.HotView, error)
}

// HotHandler serves the hot list computed by the ranking job.
type HotHandler struct {
	hot HotService
	log *slog.Logger
}

// NewHotHandler returns the handler.
func NewHotHandler(hot HotService, log *slog.Logger) *HotHandler {
	return &HotHandler{hot: hot, log: log}
}

type hotArticleJSON struct {
	articleJSON
	Score float64 `json:"score"`
}

// List handles GET /api/articles/hot?limit=: the RealWorld multiple-articles shape, best first,
// each article with its score (summaries, without bodies).
func (h *HotHandler) List(c *gin.Context) {
	v := &domain.ValidationError{}
	limit := intParam(c, v, "limit", domain.DefaultPageLimit, 1, domain.MaxPageLimit)
	if v.OrNil() != nil {
		c.AbortWithStatusJSON(http.StatusUnprocessableEntity, errorBody{Errors: v.Fields})
		return
	}
	views, err := h.hot.Hot(c.Request.Context(), viewerID(c), limit)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := make([]hotArticleJSON, len(views))
	for i, hv := range views {
		out[i] = hotArticleJSON{articleJSON: articleOf(hv.ArticleView, false), Score: hv.Score}
	}
	renderJSON(c, http.StatusOK, gin.H{"articles": out, "articlesCount": len(out)})
}
