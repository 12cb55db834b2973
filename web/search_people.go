package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=search_people.go -destination=mocks/search_people_mock.go -package=mocks

// PeopleSearchService is what the people search handler needs.
type PeopleSearchService interface {
	Users(ctx context.Context, viewerID int64, q string, limit int) ([]domain.Profile, error)
}

// Search-box parameters (people and tags): q as every search takes it (domain.CheckSearchText);
// limit is 1–maxLookupLimit, default defaultLookupLimit.
const (
	defaultLookupLimit = 10
	maxLookupLimit     = 100
)

// lookupParams reads q and limit. On bad values it answers 422 and returns false.
func lookupParams(c *gin.Context) (q string, limit int, ok bool) {
	v := &domain.ValidationError{}
	q, err := domain.CheckSearchText(c.Query("q"))
	var bad *domain.ValidationError
	if errors.As(err, &bad) {
		v.Fields = bad.Fields
	}
	limit = intParam(c, v, "limit", defaultLookupLimit, 1, maxLookupLimit)
	if v.OrNil() != nil {
		c.AbortWithStatusJSON(http.StatusUnprocessableEntity, errorBody{Errors: v.Fields})
		return "", 0, false
	}
	return q, limit, true
}

// PeopleSearchHandler serves GET /api/search/users.
type PeopleSearchHandler struct {
	people PeopleSearchService
	log    *slog.Logger
}

// NewPeopleSearchHandler returns the handler.
func NewPeopleSearchHandler(people PeopleSearchService, log *slog.Logger) *PeopleSearchHandler {
	return &PeopleSearchHandler{people: people, log: log}
}

// Users handles GET /api/search/users?q=&limit=: profiles in the RealWorld profile shape, best
// match first (exact username, username prefix, similar username, bio words), with following as
// the viewer sees it.
func (h *PeopleSearchHandler) Users(c *gin.Context) {
	q, limit, ok := lookupParams(c)
	if !ok {
		return
	}
	profiles, err := h.people.Users(c.Request.Context(), viewerID(c), q, limit)
	if err != nil {
		writeError(c, h.log, err)
		return
	}
	out := make([]profileJSON, len(profiles))
	for i, p := range profiles {
		out[i] = profileResponse(p).Profile
	}
	renderJSON(c, http.StatusOK, gin.H{"profiles": out})
}
