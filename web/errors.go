package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

// errorBody is the RealWorld error shape: {"errors": {"field": ["message", ...]}}.
type errorBody struct {
	Errors map[string][]string `json:"errors"`
}

func abortWith(c *gin.Context, status int, field, message string) {
	c.AbortWithStatusJSON(status, errorBody{Errors: map[string][]string{field: {message}}})
}

// writeError is the single place where an error becomes an HTTP response. Domain errors map to
// their status with a message fit for clients; anything else is logged and answered with a
// generic 500, so internal error text never reaches a client.
func writeError(c *gin.Context, log *slog.Logger, err error) {
	var verr *domain.ValidationError
	var cerr *domain.CodeError
	var berr *domain.BlockedError
	var serr *domain.SuspendedError
	var qerr *domain.QuotaError
	switch {
	case errors.As(err, &serr):
		c.AbortWithStatusJSON(http.StatusForbidden, suspendedBody(serr.Suspension))
	case errors.As(err, &verr):
		c.AbortWithStatusJSON(http.StatusUnprocessableEntity, errorBody{Errors: verr.Fields})
	case errors.As(err, &cerr):
		// Refusals that pass with time (resend interval, send caps, a locked target) are 429 with
		// when to retry; every refused guess is one 401 with one message.
		if cerr.RetryAfter > 0 {
			c.Header("Retry-After", strconv.Itoa(int(cerr.RetryAfter.Seconds())))
			abortWith(c, http.StatusTooManyRequests, "code", cerr.Message())
			return
		}
		abortWith(c, http.StatusUnauthorized, "code", cerr.Message())
	case errors.Is(err, domain.ErrMediaUnsupported):
		abortWith(c, http.StatusUnsupportedMediaType, "file", "is not a PNG, JPEG, GIF or WebP image")
	case errors.Is(err, domain.ErrMediaTooLarge):
		abortWith(c, http.StatusRequestEntityTooLarge, "file", "is larger than the upload limit")
	case errors.As(err, &qerr):
		// The day's quota frees itself (429 with when); the total only by deleting uploads (413).
		if qerr.Daily {
			c.Header("Retry-After", seconds(qerr.RetryAfter))
			abortWith(c, http.StatusTooManyRequests, "file", qerr.Message())
			return
		}
		abortWith(c, http.StatusRequestEntityTooLarge, "file", qerr.Message())
	case errors.Is(err, domain.ErrAccountCodeInvalid):
		abortWith(c, http.StatusUnprocessableEntity, "code", "is invalid or has expired")
	case errors.Is(err, domain.ErrInvalidCredentials):
		abortWith(c, http.StatusUnauthorized, "email or password", "is invalid")
	case errors.Is(err, domain.ErrUnauthorized):
		abortWith(c, http.StatusUnauthorized, "token", "is missing, invalid or expired")
	case errors.Is(err, domain.ErrWrongCurrentPassword):
		abortWith(c, http.StatusForbidden, "currentPassword", "is wrong")
	case errors.Is(err, domain.ErrWrongStepUpCode):
		abortWith(c, http.StatusForbidden, "code", "is invalid or has expired")
	case errors.As(err, &berr):
		abortWith(c, http.StatusForbidden, berr.Field, berr.Message)
	case errors.Is(err, domain.ErrForbidden):
		abortWith(c, http.StatusForbidden, "body", "you are not allowed to do this")
	case errors.Is(err, domain.ErrNotFound):
		abortWith(c, http.StatusNotFound, "body", "not found")
	case errors.Is(err, domain.ErrStaleVersion):
		abortWith(c, http.StatusConflict, "version", "is stale: the article was changed meanwhile; reload it and apply your edit again")
	case errors.Is(err, domain.ErrIllegalTransition):
		abortWith(c, http.StatusConflict, "status", "does not allow this: publish works on drafts, withdrawn and scheduled articles, withdraw on published and scheduled ones, schedule on all but published ones, unschedule on scheduled ones")
	case errors.Is(err, domain.ErrConflict):
		abortWith(c, http.StatusConflict, "body", "the resource was changed or is busy; reload and retry")
	case errors.Is(err, domain.ErrOverloaded):
		// Load shed on purpose (counted in metrics, not logged: a burst would flood the log); the
		// slot it waited for is typically free again within a second.
		c.Header("Retry-After", "1")
		abortWith(c, http.StatusServiceUnavailable, "body", "the service is busy; retry in a second")
	case errors.Is(err, domain.ErrUnavailable):
		log.WarnContext(c.Request.Context(), "dependency unavailable", "err", err)
		c.Header("Retry-After", "5")
		abortWith(c, http.StatusServiceUnavailable, "body", "the service is temporarily unavailable; retry shortly")
	case errors.Is(err, context.DeadlineExceeded):
		// The request's deadline (INKWELL_REQUEST_TIMEOUT) or a dependency's own timeout ran out:
		// the service is slow right now, which is not the client's fault nor a bug.
		log.WarnContext(c.Request.Context(), "request ran out of time", "method", c.Request.Method, "route", c.FullPath(), "err", err)
		c.Header("Retry-After", "5")
		abortWith(c, http.StatusServiceUnavailable, "body", "the request took too long; retry shortly")
	case errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil:
		// The client went away; nobody reads this response.
		c.AbortWithStatus(499)
	default:
		log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method, "route", c.FullPath(), "err", err)
		abortWith(c, http.StatusInternalServerError, "body", "internal server error")
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
