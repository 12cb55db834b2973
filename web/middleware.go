package web

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/internal/requestid"
)

const (
	ctxUserID = "inkwell.userID"
	ctxToken  = "inkwell.token"
)

// limitBody caps every request body; reading past the cap fails with *http.MaxBytesError, which
// bindJSON answers with 413.
func limitBody(max int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > max {
			abortWith(c, http.StatusRequestEntityTooLarge, "body", "request body is too large")
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, max)
		c.Next()
	}
}

// recoverJSON turns a panic into a logged, generic 500 in the RealWorld error shape.
func recoverJSON(log *slog.Logger) gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, v any) {
		log.ErrorContext(c.Request.Context(), "panic while serving request", "route", c.FullPath(), "panic", v)
		abortWith(c, http.StatusInternalServerError, "body", "internal server error")
	})
}

// RequestObserver records each request's route template, method, status and duration (metrics).
type RequestObserver interface {
	ObserveRequest(route, method string, status int, d time.Duration)
}

// requestID takes the request id from X-Request-Id (when it is a sane value) or makes one, echoes
// it in the response, and puts it in the context so every log line of the request carries it.
func requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-Id")
		if !requestid.Valid(id) {
			id = requestid.New()
		}
		c.Header("X-Request-Id", id)
		c.Request = c.Request.WithContext(requestid.With(c.Request.Context(), id))
		c.Next()
	}
}

// accessLog writes one line per request and reports it to the observer. The route is the template
// (/api/articles/:slug), never the raw path, so metrics stay bounded and no slug ends up a label.
func accessLog(log *slog.Logger, obs RequestObserver) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		d := time.Since(start)
		if obs != nil {
			obs.ObserveRequest(route, c.Request.Method, c.Writer.Status(), d)
		}
		log.InfoContext(c.Request.Context(), "request", "method", c.Request.Method, "route", route,
			"status", c.Writer.Status(), "duration_ms", d.Milliseconds())
	}
}

// tokenFrom extracts the token of "Authorization: Token <jwt>" or "Bearer <jwt>".
func tokenFrom(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || (!strings.EqualFold(scheme, "Token") && !strings.EqualFold(scheme, "Bearer")) {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Authenticator resolves the Authorization header into a user id.
type Authenticator struct {
	users UserService
	log   *slog.Logger
}

// NewAuthenticator returns the authentication middleware factory.
func NewAuthenticator(users UserService, log *slog.Logger) *Authenticator {
	return &Authenticator{users: users, log: log}
}

// Required refuses requests without a valid token with 401.
func (a *Authenticator) Required() gin.HandlerFunc { return a.handle(true) }

// Optional lets anonymous requests through but refuses an invalid token with 401, so a client
// never silently acts as a stranger because its token went bad.
func (a *Authenticator) Optional() gin.HandlerFunc { return a.handle(false) }

func (a *Authenticator) handle(required bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		header := c.GetHeader("Authorization")
		if header == "" {
			if required {
				abortWith(c, http.StatusUnauthorized, "token", "is missing; send Authorization: Token <jwt>")
				return
			}
			c.Next()
			return
		}
		token, ok := tokenFrom(header)
		if !ok {
			abortWith(c, http.StatusUnauthorized, "token", "is malformed; send Authorization: Token <jwt>")
			return
		}
		id, err := a.users.Authenticate(c.Request.Context(), token)
		if err != nil {
			writeError(c, a.log, err)
			return
		}
		c.Set(ctxUserID, id)
		c.Set(ctxToken, token)
		c.Next()
	}
}

// viewerID is the authenticated user's id, or 0 for an anonymous request.
func viewerID(c *gin.Context) int64 { return c.GetInt64(ctxUserID) }

func requestToken(c *gin.Context) string { return c.GetString(ctxToken) }
