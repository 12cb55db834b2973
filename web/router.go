package web

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"
)

// RouterConfig holds the HTTP settings the router needs.
type RouterConfig struct {
	MaxBodyBytes int64
	// UploadMaxBytes is one uploaded file's limit: POST /api/uploads may carry that plus the
	// multipart framing instead of MaxBodyBytes (0: uploads get MaxBodyBytes too).
	UploadMaxBytes int64
	CORS           CORSConfig
	RateLimits     RateLimits
	TrustedProxies []string      // proxies whose X-Forwarded-For names the client and whose trace context is continued; none by default
	RequestTimeout time.Duration // each request's context deadline (0: none); see requestDeadline
	// Tracer makes every request a server span named by its route template; nil: no spans, and
	// no tracing middleware at all (the request path pays nothing).
	Tracer trace.TracerProvider
}

// Handlers are every handler the router mounts.
type Handlers struct {
	Auth          *Authenticator
	Users         *UserHandler
	Profiles      *ProfileHandler
	Blocks        *BlockHandler
	Articles      *ArticleHandler
	Revisions     *RevisionHandler
	Schedule      *ArticleScheduleHandler
	Comments      *CommentHandler
	Collections   *CollectionHandler
	Hot           *HotHandler
	Notifications *NotificationHandler
	// NotificationStream serves the live notification stream (SSE) and its tickets.
	NotificationStream *NotificationStreamHandler
	CodeLogin          *CodeLoginHandler
	Account            *AccountHandler
	Sessions           *SessionHandler
	Search             *SearchHandler
	SearchPeople       *PeopleSearchHandler
	SearchTags         *TagSearchHandler
	Reports            *ReportHandler
	Uploads            *UploadHandler
	Moderation         *ModerationHandler
	Media              *MediaHandler
	Sitemaps           *SitemapHandler
	SignIn             *SignInHandler
	Feeds              *FeedHandler
	Webhooks           *WebhookHandler
	Idempotency        *Idempotency
	Limiter            RateLimiter
	Observer           RequestObserver // nil: no metrics
	Readiness          ReadinessChecker
	Drain              *Drain // nil: /readyz never answers draining
	// Writes records users' writes for read-your-writes over read replicas; nil without replicas.
	Writes WriteRecorder
}

// NewRouter returns the gin engine with every route of the API.
func NewRouter(cfg RouterConfig, log *slog.Logger, h Handlers) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// The client IP keys rate limits and registration idempotency: trust X-Forwarded-For only from
	// configured proxies, or any client could pick its own IP.
	_ = r.SetTrustedProxies(cfg.TrustedProxies)
	r.Use(requestID())
	if cfg.Tracer != nil {
		// Outside the access log and the recovery, so their lines carry the trace id. The same
		// proxies whose X-Forwarded-For names the client may hand the request's trace on.
		r.Use(traceRequests(cfg.Tracer, cfg.TrustedProxies)...)
	}
	r.Use(recoverJSON(log), accessLog(log, h.Observer), cors(cfg.CORS), limitBody(cfg.MaxBodyBytes, cfg.UploadMaxBytes), plainText(),
		requestDeadline(cfg.RequestTimeout))
	if h.Writes != nil {
		r.Use(readYourWrites(h.Writes, log))
	}
	r.NoRoute(func(c *gin.Context) { abortWith(c, http.StatusNotFound, "body", "no such endpoint") })
	r.NoMethod(func(c *gin.Context) {
		abortWith(c, http.StatusMethodNotAllowed, "body", "method not allowed on this endpoint")
	})

	r.GET("/healthz", func(c *gin.Context) { renderJSON(c, http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", readyz(h.Readiness, h.Drain, log))
	r.GET("/api/openapi.yaml", serveOpenAPI)
	r.GET(explorerPath, serveExplorer)
	r.GET(explorerPath+"/*asset", serveExplorer)
	r.GET(mediaPath+":key", h.Media.Serve) // outside /api: a store's objects, not the API
	// Outside /api, where crawlers look for them.
	r.GET("/robots.txt", h.Sitemaps.Robots)
	r.GET("/sitemap.xml", h.Sitemaps.Index)
	r.GET("/sitemaps/:file", h.Sitemaps.Page)
	// Feeds, outside /api like the sitemaps. gin cannot route a suffix after a parameter, so the
	// handlers take the file name (USERNAME.atom, TAG.atom) and cut the suffix off.
	r.GET("/feeds/articles.atom", h.Feeds.GlobalAtom)
	r.GET("/feeds/articles.rss", h.Feeds.GlobalRSS)
	r.GET("/feeds/authors/:file", h.Feeds.Author)
	r.GET("/feeds/tags/:file", h.Feeds.Tag)

	pass := func(c *gin.Context) { c.Next() }
	// Writes by a signed-in user count against the user's write budget; reads do not.
	writeLimit, authLimit, searchLimit := gin.HandlerFunc(pass), gin.HandlerFunc(pass), gin.HandlerFunc(pass)
	reportLimit, uploadLimit := gin.HandlerFunc(pass), gin.HandlerFunc(pass)
	if h.Limiter != nil {
		limit := rateLimit(h.Limiter, cfg.RateLimits.Writes, byUser, log)
		writeLimit = func(c *gin.Context) {
			if c.Request.Method == http.MethodGet {
				c.Next()
				return
			}
			limit(c)
		}
		authLimit = rateLimit(h.Limiter, cfg.RateLimits.Auth, byClientIP, log)
		// Searches are PostgreSQL's dearest reads: without a budget one client's burst fills the
		// search pool and every other searcher queues behind it.
		searchLimit = rateLimit(h.Limiter, cfg.RateLimits.Search, byClient, log)
		reportLimit = rateLimit(h.Limiter, cfg.RateLimits.Reports, byUser, log)
		uploadLimit = rateLimit(h.Limiter, cfg.RateLimits.Uploads, byUser, log)
	}
	idemUser, idemClient := gin.HandlerFunc(pass), gin.HandlerFunc(pass)
	if h.Idempotency != nil {
		idemUser, idemClient = h.Idempotency.ForUser(), h.Idempotency.ForClient()
	}

	api := r.Group("/api")
	pub := api.Group("", h.Auth.Optional())              // anyone; a valid token adds the viewer's flags
	auth := api.Group("", h.Auth.Required(), writeLimit) // a signed-in user
	// Account management: a login session only, never an API key.
	account := api.Group("", h.Auth.Required(), writeLimit, h.Auth.SessionOnly())
	client := RecordClient() // logins note the client in the session they open

	api.POST("/users", authLimit, client, idemClient, h.Users.Register)
	api.POST("/users/login", authLimit, client, h.Users.Login)
	api.POST("/users/login/code/send", authLimit, client, h.CodeLogin.Send)
	api.POST("/users/login/code", authLimit, client, h.CodeLogin.Login)
	api.POST("/users/password/reset", authLimit, client, h.Account.RequestPasswordReset)
	api.POST("/users/password/reset/confirm", authLimit, client, h.Account.ConfirmPasswordReset)
	api.POST("/users/refresh", authLimit, h.Sessions.Refresh)
	account.POST("/users/logout", h.Sessions.Logout)

	// Sign in with a provider (#30): start, callback and exchange on the auth budget; linking
	// another provider is account management (a session, never an API key).
	api.GET("/auth/providers", h.SignIn.Providers)
	api.GET("/auth/oidc/:provider/start", authLimit, h.SignIn.Start)
	account.POST("/auth/oidc/:provider/start", authLimit, h.SignIn.StartLink)
	api.GET("/auth/oidc/:provider/callback", authLimit, h.SignIn.Callback)
	api.POST("/auth/oidc/exchange", authLimit, client, h.SignIn.Exchange)
	account.GET("/user/identities", h.SignIn.Identities)
	account.DELETE("/user/identities/:id", h.SignIn.Unlink)

	auth.GET("/user", h.Users.Current)
	account.PUT("/user", h.Users.Update)
	account.POST("/user/step-up/code", client, h.CodeLogin.SendStepUp)
	account.POST("/user/email/verify", client, h.Account.VerifyEmail)
	account.POST("/user/email/verify/resend", h.Account.ResendVerification)
	auth.GET("/user/articles", h.Articles.Mine)
	auth.GET("/user/history", h.Collections.History)
	auth.GET("/user/notifications", h.Notifications.List)
	auth.POST("/user/notifications/read", h.Notifications.MarkRead)
	pub.GET("/user/notifications/stream", h.NotificationStream.Stream) // the header, or ?ticket=
	account.POST("/user/notifications/stream/ticket", h.NotificationStream.Ticket)
	account.POST("/user/api-keys", h.Sessions.CreateAPIKey)
	account.GET("/user/api-keys", h.Sessions.ListAPIKeys)
	account.DELETE("/user/api-keys/:id", h.Sessions.RevokeAPIKey)
	account.GET("/user/sessions", h.Sessions.ListSessions)
	account.DELETE("/user/sessions/:id", h.Sessions.RevokeSession)

	pub.GET("/profiles/:username", h.Profiles.Get)
	auth.POST("/profiles/:username/follow", h.Profiles.Follow)
	auth.DELETE("/profiles/:username/follow", h.Profiles.Unfollow)
	auth.POST("/profiles/:username/block", h.Blocks.Block)
	auth.DELETE("/profiles/:username/block", h.Blocks.Unblock)
	auth.GET("/user/blocks", h.Blocks.List)

	pub.GET("/articles", h.Articles.List)
	auth.POST("/articles", idemUser, h.Articles.Create)
	auth.GET("/articles/feed", h.Articles.Feed)
	pub.GET("/articles/hot", h.Hot.List)
	pub.GET("/articles/:slug", h.Articles.Get)
	auth.PUT("/articles/:slug", h.Articles.Update)
	auth.DELETE("/articles/:slug", h.Articles.Delete)
	auth.POST("/articles/:slug/publish", h.Articles.Publish)
	auth.POST("/articles/:slug/withdraw", h.Articles.Withdraw)
	// Revisions (#32): the author and moderators read them, the author restores (the service checks).
	auth.GET("/articles/:slug/revisions", h.Revisions.List)
	auth.GET("/articles/:slug/revisions/:version", h.Revisions.Get)
	auth.POST("/articles/:slug/revisions/:version/restore", h.Revisions.Restore)
	auth.POST("/articles/:slug/schedule", h.Schedule.Schedule)
	auth.DELETE("/articles/:slug/schedule", h.Schedule.Unschedule)
	auth.POST("/articles/:slug/favorite", h.Articles.Favorite)
	auth.DELETE("/articles/:slug/favorite", h.Articles.Unfavorite)
	pub.GET("/articles/:slug/comments", h.Comments.List)
	auth.POST("/articles/:slug/comments", idemUser, h.Comments.Add)
	auth.PUT("/articles/:slug/comments/:id", h.Comments.Edit)
	auth.DELETE("/articles/:slug/comments/:id", h.Comments.Delete)
	auth.POST("/articles/:slug/collect", h.Collections.Collect)
	auth.DELETE("/articles/:slug/collect", h.Collections.Uncollect)
	api.GET("/tags", h.Articles.Tags)
	// Search has paths of its own, so no article slug is ever shadowed. One budget per client,
	// counted after authentication: a signed-in user's own, else the client IP's. Tag search is
	// public and never reads a token, so it always counts against the IP's.
	pub.GET("/search/articles", searchLimit, h.Search.Articles)
	pub.GET("/search/users", searchLimit, h.SearchPeople.Users)
	api.GET("/search/tags", searchLimit, h.SearchTags.Tags)

	auth.POST("/collections", h.Collections.Create)
	auth.GET("/collections", h.Collections.List)
	auth.PATCH("/collections/:id", h.Collections.Update)
	auth.DELETE("/collections/:id", h.Collections.Delete)
	auth.GET("/collections/:id/articles", h.Collections.Articles)

	// Moderation: the role checks are the service's (an API key is refused there too).
	auth.PUT("/admin/users/:username/role", h.Moderation.SetRole)
	auth.POST("/moderation/articles/:slug/hide", h.Moderation.HideArticle)
	auth.POST("/moderation/articles/:slug/unhide", h.Moderation.UnhideArticle)
	auth.POST("/moderation/comments/:id/hide", h.Moderation.HideComment)
	auth.POST("/moderation/comments/:id/unhide", h.Moderation.UnhideComment)
	auth.POST("/moderation/users/:username/suspend", h.Moderation.Suspend)
	auth.POST("/moderation/users/:username/unsuspend", h.Moderation.Unsuspend)

	// Reports: any signed-in user, on a budget of their own. The queue and the log: moderators and
	// admins (the log: admins), checked by the use cases; API keys never moderate.
	auth.POST("/reports", reportLimit, h.Reports.File)
	auth.GET("/moderation/reports", h.Reports.Queue)
	auth.POST("/moderation/reports/:id/resolve", h.Reports.Resolve)
	auth.GET("/moderation/log", h.Reports.Log)

	// Uploads: a signed-in user's own images, on a budget of their own (decoding is dear).
	auth.POST("/uploads", uploadLimit, h.Uploads.Upload)
	auth.GET("/user/uploads", h.Uploads.List)
	auth.DELETE("/uploads/:id", h.Uploads.Delete)

	// Webhooks (#33): a user's own endpoints; the site's for admins (checked by the use cases).
	h.Webhooks.mount(auth, "/user/webhooks", false)
	h.Webhooks.mount(auth, "/admin/webhooks", true)
	return r
}
