package web

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/requestid"
	"github.com/inkwell-dev/inkwell/service"
)

const (
	ctxUserID     = "inkwell.userID"
	ctxToken      = "inkwell.token"
	ctxCredential = "inkwell.credential"
)

// limitBody caps every request body; reading past the cap fails with *http.MaxBytesError, which
// bindJSON answers with 413.
func limitBody(max, uploadMax int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		max := max
		if uploadMax > 0 && c.Request.Method == http.MethodPost && c.Request.URL.Path == uploadsPath {
			// An upload's own bound: the file's limit plus the multipart framing (UploadHandler).
			max = uploadMax + multipartOverhead
		}
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
// The client IP is gin's ClientIP, which reads X-Forwarded-For only from the trusted proxies (the
// same IP rate limits key on). Probes (/healthz, /readyz) arrive every few seconds from every
// monitor and say nothing about users: they are logged at debug.
func accessLog(log *slog.Logger, obs RequestObserver) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		d := time.Since(start)
		status := c.Writer.Status()
		if obs != nil {
			obs.ObserveRequest(route, c.Request.Method, status, d)
		}
		level := slog.LevelInfo
		if probeRoutes[route] {
			level = slog.LevelDebug
		}
		ctx := c.Request.Context()
		if !log.Enabled(ctx, level) {
			return
		}
		attrs := make([]slog.Attr, 0, 7)
		attrs = append(attrs, slog.String("method", c.Request.Method), slog.String("route", route), slog.Int("status", status),
			slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.String("client_ip", c.ClientIP()))
		if id := viewerID(c); id != 0 {
			attrs = append(attrs, slog.Int64("user_id", id))
		}
		// request_id is added by the process logger's handler from the context (ioc.NewLogger).
		log.LogAttrs(ctx, level, "request", attrs...)
	}
}

// probeRoutes are the routes of health probes. (Metric scrapes have a listener of their own,
// ioc.MetricsServer, outside this router.)
var probeRoutes = map[string]bool{"/healthz": true, "/readyz": true}

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
		cred, err := a.users.Authenticate(c.Request.Context(), token)
		if err != nil {
			writeError(c, a.log, err)
			return
		}
		if !cred.CanWrite() && !isReadMethod(c.Request.Method) {
			abortWith(c, http.StatusForbidden, "token", "is an API key with the read scope: it may only send GET requests")
			return
		}
		c.Set(ctxUserID, cred.UserID)
		c.Set(ctxToken, token)
		c.Set(ctxCredential, cred)
		readerContext(c, cred.UserID)
		c.Next()
	}
}

// SessionOnly refuses API keys with 403 (after Required): changing credentials, managing keys
// and managing sessions need a login session, so a leaked key cannot take the account over.
func (a *Authenticator) SessionOnly() gin.HandlerFunc {
	return func(c *gin.Context) {
		if credentialOf(c).IsAPIKey() {
			abortWith(c, http.StatusForbidden, "token", "is an API key; account management (email, password, API keys, sessions, logout) needs a login session")
			return
		}
		c.Next()
	}
}

func isReadMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// RecordClient names the client in the request's context: its User-Agent, for the session a
// login opens, and its address (the IP the rate limits key on), for the code budgets kept per
// requester.
func RecordClient() gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := service.WithUserAgent(c.Request.Context(), c.Request.UserAgent())
		c.Request = c.Request.WithContext(service.WithRequester(ctx, c.ClientIP()))
		c.Next()
	}
}

// viewerID is the authenticated user's id, or 0 for an anonymous request.
func viewerID(c *gin.Context) int64 { return c.GetInt64(ctxUserID) }

func requestToken(c *gin.Context) string { return c.GetString(ctxToken) }

// credentialOf is the authenticated request's credential (zero for an anonymous one).
func credentialOf(c *gin.Context) domain.Credential {
	cred, _ := c.Get(ctxCredential)
	v, _ := cred.(domain.Credential)
	return v
}

// sessionToken is the request's access token, or "" when it used an API key: a key is never
// echoed back in an answer.
func sessionToken(c *gin.Context) string {
	if credentialOf(c).IsAPIKey() {
		return ""
	}
	return requestToken(c)
}
