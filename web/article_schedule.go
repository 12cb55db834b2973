package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=article_schedule.go -destination=mocks/article_schedule_mock.go -package=mocks

// ArticleScheduler is what the schedule handlers need (service.ArticleScheduleService).
type ArticleScheduler interface {
	Schedule(ctx context.Context, viewerID int64, slug, publishAt string) (domain.ArticleView, error)
	Unschedule(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
}

// ArticleScheduleHandler serves scheduled publishing (#32).
type ArticleScheduleHandler struct {
	schedule ArticleScheduler
	log      *slog.Logger
}

// NewArticleScheduleHandler returns the handler.
func NewArticleScheduleHandler(schedule ArticleScheduler, log *slog.Logger) *ArticleScheduleHandler {
	return &ArticleScheduleHandler{schedule: schedule, log: log}
}

type scheduleRequest struct {
	PublishAt *string `json:"publishAt"`
}

// Schedule handles POST /api/articles/:slug/schedule {"publishAt": "<RFC 3339>"}: the article
// publishes itself then. Bytes that are not UTF-8 and NUL characters are publishAt's error (the
// only field), 422 like every other refusal of the time.
func (h *ArticleScheduleHandler) Schedule(c *gin.Context) {
	raw, err := io.ReadAll(c.Request.Body)
	if err == nil && (!utf8.Valid(raw) || hasNULEscape(raw)) {
		abortWith(c, http.StatusUnprocessableEntity, "publishAt", "must be UTF-8 text without NUL characters")
		return
	}
	c.Request.Body = io.NopCloser(io.MultiReader(bytes.NewReader(raw), errReader{err}))
	var req scheduleRequest
	if !bindJSON(c, &req) {
		return
	}
	if req.PublishAt == nil {
		abortWith(c, http.StatusUnprocessableEntity, "publishAt", "can't be blank")
		return
	}
	v, err := h.schedule.Schedule(c.Request.Context(), viewerID(c), c.Param("slug"), *req.PublishAt)
	h.respond(c, v, err)
}

// Unschedule handles DELETE /api/articles/:slug/schedule: the scheduled article is a draft again.
func (h *ArticleScheduleHandler) Unschedule(c *gin.Context) {
	v, err := h.schedule.Unschedule(c.Request.Context(), viewerID(c), c.Param("slug"))
	h.respond(c, v, err)
}

func (h *ArticleScheduleHandler) respond(c *gin.Context, v domain.ArticleView, err error) {
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, articleEnvelope{Article: articleOf(v, true)})
}

// errReader hands on the error that ended reading a body (nil: EOF), so bindJSON answers a body
// that was too large as it would have.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}
