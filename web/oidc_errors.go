package web

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

// writeSignInError answers the sign-in flow's own errors, and passes the rest to writeError.
func writeSignInError(c *gin.Context, log *slog.Logger, err error) {
	switch {
	case errors.Is(err, domain.ErrUnknownProvider):
		abortWith(c, http.StatusNotFound, "provider", "is not a configured sign-in provider")
	case errors.Is(err, domain.ErrProviderUnavailable):
		c.Header("Retry-After", "30")
		abortWith(c, http.StatusServiceUnavailable, "provider", "is unavailable right now (its issuer cannot be reached); try again later or use another way to sign in")
	case errors.Is(err, domain.ErrBadSignInState):
		abortWith(c, http.StatusBadRequest, "state", "is invalid, expired, already used or not this browser's; start the sign-in again")
	case errors.Is(err, domain.ErrAccountCodeInvalid):
		abortWith(c, http.StatusUnprocessableEntity, "code", "is invalid, expired or already used; sign in again")
	default:
		writeError(c, log, err)
	}
}
