package web

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

// Threaded comments (issue #32): the EXT fields of every comment, replies (parentId on create,
// ?parent=ID on the list) and edits (PUT).

// threadJSON is where a comment sits in its thread.
type threadJSON struct {
	// ParentID is the comment this one answers, null at the top level.
	ParentID     *int64 `json:"parentId"`
	RepliesCount int64  `json:"repliesCount"`
	// Deleted marks a placeholder: a deleted comment kept for its replies (empty body, null author).
	Deleted bool `json:"deleted"`
	Edited  bool `json:"edited"`
}

func threadOf(c domain.Comment) threadJSON {
	t := threadJSON{RepliesCount: c.RepliesCount, Deleted: c.Deleted, Edited: c.Edited}
	if c.ParentID != 0 {
		id := c.ParentID
		t.ParentID = &id
	}
	return t
}

// parentIDOf checks a create request's parentId: absent or null is a top-level comment, anything
// but a positive id is 422.
func parentIDOf(c *gin.Context, p *int64) (int64, bool) {
	if p == nil {
		return 0, true
	}
	if *p <= 0 {
		abortWith(c, http.StatusUnprocessableEntity, "parentId", "must be the id of a comment of this article")
		return 0, false
	}
	return *p, true
}

type editCommentRequest struct {
	Comment struct {
		Body string `json:"body"`
	} `json:"comment"`
}

// Edit handles PUT /api/articles/:slug/comments/:id: the viewer's own comment gets a new body
// and is marked edited (403 for another's comment, 404 for a missing one or a placeholder).
func (h *CommentHandler) Edit(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		abortWith(c, http.StatusNotFound, "body", "not found")
		return
	}
	var req editCommentRequest
	if !bindJSON(c, &req) {
		return
	}
	v, err := h.comments.Edit(c.Request.Context(), viewerID(c), c.Param("slug"), id, req.Comment.Body)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	renderJSON(c, http.StatusOK, gin.H{"comment": commentOf(v)})
}
