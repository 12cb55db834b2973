package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=block.go -destination=mocks/block_mock.go -package=mocks

// BlockService is what the block handlers need.
type BlockService interface {
	Block(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
	Unblock(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
	List(ctx context.Context, viewerID int64, cursor *domain.Cursor, limit int) (service.BlockList, error)
}

// BlockHandler serves blocking users and the signed-in user's block list.
type BlockHandler struct {
	blocks BlockService
	log    *slog.Logger
}

// NewBlockHandler returns the handler.
func NewBlockHandler(blocks BlockService, log *slog.Logger) *BlockHandler {
	return &BlockHandler{blocks: blocks, log: log}
}

// Block handles POST /api/profiles/:username/block.
func (h *BlockHandler) Block(c *gin.Context) {
	respondProfile(c, h.log)(h.blocks.Block(c.Request.Context(), viewerID(c), c.Param("username")))
}

// Unblock handles DELETE /api/profiles/:username/block.
func (h *BlockHandler) Unblock(c *gin.Context) {
	respondProfile(c, h.log)(h.blocks.Unblock(c.Request.Context(), viewerID(c), c.Param("username")))
}

type blockedJSON struct {
	profileJSON
	BlockedAt timestamp `json:"blockedAt"`
}

// List handles GET /api/user/blocks?cursor=&limit=: the users the viewer blocks, newest first.
func (h *BlockHandler) List(c *gin.Context) {
	p, ok := pageParams(c)
	if !ok {
		return
	}
	if p.Offset != 0 {
		abortWith(c, http.StatusUnprocessableEntity, "offset", "is not supported here: page with cursor")
		return
	}
	l, err := h.blocks.List(c.Request.Context(), viewerID(c), p.Cursor, p.Limit)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	blocking := true
	out := make([]blockedJSON, len(l.Blocked))
	for i, b := range l.Blocked {
		out[i] = blockedJSON{
			profileJSON: profileJSON{Username: b.Username, Bio: b.Bio, Image: b.Image, Blocking: &blocking},
			BlockedAt:   timestamp(b.BlockedAt),
		}
	}
	body := gin.H{"profiles": out}
	if cur := encodeCursor(l.NextCursor); cur != "" {
		body["nextCursor"] = cur
	}
	renderJSON(c, http.StatusOK, body)
}
