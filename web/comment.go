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

//go:generate go tool mockgen -source=comment.go -destination=mocks/comment_mock.go -package=mocks

// CommentService is what the comment handlers need.
type CommentService interface {
	Add(ctx context.Context, viewerID int64, slug, body string, parentID int64) (domain.CommentView, error)
	AddIdempotent(ctx context.Context, viewerID int64, slug, body string, parentID int64, idem service.Idempotent[domain.CommentView]) (domain.StoredResponse, bool, error)
	List(ctx context.Context, viewerID int64, slug string, afterSeq int64, limit int) (service.CommentList, error)
	Delete(ctx context.Context, viewerID int64, slug string, commentID int64) error
	// Edit and Replies: threaded comments (comment_threads.go).
	Edit(ctx context.Context, viewerID int64, slug string, commentID int64, body string) (domain.CommentView, error)
	Replies(ctx context.Context, viewerID int64, slug string, parentID, afterID int64, limit int) (service.CommentList, error)
}

// CommentHandler serves comments on articles.
type CommentHandler struct {
	comments CommentService
	log      *slog.Logger
}

// NewCommentHandler returns the handler.
func NewCommentHandler(comments CommentService, log *slog.Logger) *CommentHandler {
	return &CommentHandler{comments: comments, log: log}
}

type commentJSON struct {
	ID        int64     `json:"id"`
	Seq       int64     `json:"seq"`
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
	Body      string    `json:"body"`
	// Author is an empty profile (username "") on a placeholder, a deleted comment that has
	// replies: no one is named, and a RealWorld client that reads author.username still can.
	Author profileJSON `json:"author"`
	// Moderation is present only on a comment a moderator hid, which only its author sees.
	Moderation *moderationJSON `json:"moderation,omitempty"`
	threadJSON
}

func commentOf(v domain.CommentView) commentJSON {
	out := commentJSON{ID: v.ID, Seq: v.Seq, CreatedAt: timestamp(v.CreatedAt), UpdatedAt: timestamp(v.UpdatedAt), Body: v.Body,
		Moderation: moderationOf(v.Moderation), threadJSON: threadOf(v.Comment)}
	if !v.Deleted {
		out.Author = profileResponse(v.Author).Profile
	}
	return out
}

type addCommentRequest struct {
	Comment struct {
		Body string `json:"body"`
		// ParentID, when present, is the comment this one answers (threaded comments).
		ParentID *int64 `json:"parentId"`
	} `json:"comment"`
}

// Add handles POST /api/articles/:slug/comments.
func (h *CommentHandler) Add(c *gin.Context) {
	var req addCommentRequest
	if !bindJSON(c, &req) {
		return
	}
	parentID, ok := parentIDOf(c, req.Comment.ParentID)
	if !ok {
		return
	}
	respond := func(v domain.CommentView, err error) {
		if err != nil {
			writeError(c, h.log, err)
			return
		}
		renderJSON(c, http.StatusOK, gin.H{"comment": commentOf(v)})
	}
	if key, ok := idempotencyKeyOf(c); ok {
		res, replayed, err := h.comments.AddIdempotent(c.Request.Context(), viewerID(c), c.Param("slug"), req.Comment.Body, parentID, idempotent(c, key, respond))
		writeStored(c, h.log, res, replayed, err)
		return
	}
	respond(h.comments.Add(c.Request.Context(), viewerID(c), c.Param("slug"), req.Comment.Body, parentID))
}

// List handles GET /api/articles/:slug/comments, all of them (RealWorld) or, with ?limit= and
// ?after=<seq> or ?cursor=<the last page's nextCursor>, the next page after the last one seen.
// nextCursor is there only when more comments follow. With ?parent=ID it pages that comment's
// direct replies instead (comment_threads.go).
func (h *CommentHandler) List(c *gin.Context) {
	v := &domain.ValidationError{}
	parent := int64(intParam(c, v, "parent", 0, 1, 1<<53))
	after := int64(intParam(c, v, "after", 0, 0, 1<<53))
	limit := intParam(c, v, "limit", service.MaxCommentsPerRequest, 1, service.MaxCommentsPerRequest)
	if s := c.Query("cursor"); s != "" {
		seq, ok := decodeSeqCursor(s)
		switch _, both := c.GetQuery("after"); {
		case !ok:
			v.Add("cursor", "is not a cursor this API returned")
		case both:
			v.Add("cursor", "cannot be combined with after")
		default:
			after = seq
		}
	}
	if v.OrNil() != nil {
		c.AbortWithStatusJSON(http.StatusUnprocessableEntity, errorBody{Errors: v.Fields})
		return
	}
	var l service.CommentList
	var err error
	if parent != 0 {
		l, err = h.comments.Replies(c.Request.Context(), viewerID(c), c.Param("slug"), parent, after, limit)
	} else {
		l, err = h.comments.List(c.Request.Context(), viewerID(c), c.Param("slug"), after, limit)
	}
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := make([]commentJSON, len(l.Comments))
	for i, cv := range l.Comments {
		out[i] = commentOf(cv)
	}
	body := gin.H{"comments": out}
	if l.NextAfter != 0 {
		body["nextCursor"] = encodeSeqCursor(l.NextAfter)
	}
	renderJSON(c, http.StatusOK, body)
}

// Delete handles DELETE /api/articles/:slug/comments/:id.
func (h *CommentHandler) Delete(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		abortWith(c, http.StatusNotFound, "body", "not found")
		return
	}
	if err := h.comments.Delete(c.Request.Context(), viewerID(c), c.Param("slug"), id); err != nil {
		writeError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}
