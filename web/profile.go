package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=profile.go -destination=mocks/profile_mock.go -package=mocks

// ProfileService is what the profile handlers need.
type ProfileService interface {
	Get(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
	Follow(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
	Unfollow(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
}

// ProfileHandler serves public profiles and follows.
type ProfileHandler struct {
	profiles ProfileService
	log      *slog.Logger
}

// NewProfileHandler returns the handler.
func NewProfileHandler(profiles ProfileService, log *slog.Logger) *ProfileHandler {
	return &ProfileHandler{profiles: profiles, log: log}
}

type profileJSON struct {
	Username  string `json:"username"`
	Bio       string `json:"bio"`
	Image     string `json:"image"`
	Following bool   `json:"following"`
	// Blocking is shown on the profile endpoints (and the block list) to a signed-in viewer only.
	Blocking *bool `json:"blocking,omitempty"`
}

type profileEnvelope struct {
	Profile profileJSON `json:"profile"`
}

func profileResponse(p domain.Profile) profileEnvelope {
	return profileEnvelope{Profile: profileJSON{Username: p.Username, Bio: p.Bio, Image: p.Image, Following: p.Following}}
}

// Get handles GET /api/profiles/:username.
func (h *ProfileHandler) Get(c *gin.Context) {
	h.respond(c)(h.profiles.Get(c.Request.Context(), viewerID(c), c.Param("username")))
}

// Follow handles POST /api/profiles/:username/follow.
func (h *ProfileHandler) Follow(c *gin.Context) {
	h.respond(c)(h.profiles.Follow(c.Request.Context(), viewerID(c), c.Param("username")))
}

// Unfollow handles DELETE /api/profiles/:username/follow.
func (h *ProfileHandler) Unfollow(c *gin.Context) {
	h.respond(c)(h.profiles.Unfollow(c.Request.Context(), viewerID(c), c.Param("username")))
}

func (h *ProfileHandler) respond(c *gin.Context) func(domain.Profile, error) {
	return respondProfile(c, h.log)
}

// respondProfile answers a profile endpoint: the profile, with `blocking` for a signed-in viewer.
func respondProfile(c *gin.Context, log *slog.Logger) func(domain.Profile, error) {
	return func(p domain.Profile, err error) {
		if err != nil {
			writeError(c, log, err)
			return
		}
		body := profileResponse(p)
		if viewerID(c) != 0 {
			body.Profile.Blocking = &p.Blocking
		}
		renderJSON(c, http.StatusOK, body)
	}
}
