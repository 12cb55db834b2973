package web

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/wire"
)

// ProviderSet builds the handlers and the router.
var ProviderSet = wire.NewSet(NewAuthenticator, NewUserHandler, NewProfileHandler, NewArticleHandler,
	NewCommentHandler, NewCollectionHandler, NewHotHandler, NewNotificationHandler,
	NewCodeLoginHandler, wire.Struct(new(Handlers), "*"), NewRouter)

// RouterConfig holds the HTTP settings the router needs.
type RouterConfig struct {
	MaxBodyBytes int64
	CORS         CORSConfig
}

// Handlers are every handler the router mounts.
type Handlers struct {
	Auth          *Authenticator
	Users         *UserHandler
	Profiles      *ProfileHandler
	Articles      *ArticleHandler
	Comments      *CommentHandler
	Collections   *CollectionHandler
	Hot           *HotHandler
	Notifications *NotificationHandler
	CodeLogin     *CodeLoginHandler
}

// NewRouter returns the gin engine with every route of the API.
func NewRouter(cfg RouterConfig, log *slog.Logger, h Handlers) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(recoverJSON(log), accessLog(log), cors(cfg.CORS), limitBody(cfg.MaxBodyBytes))
	r.NoRoute(func(c *gin.Context) { abortWith(c, http.StatusNotFound, "body", "no such endpoint") })
	r.NoMethod(func(c *gin.Context) {
		abortWith(c, http.StatusMethodNotAllowed, "body", "method not allowed on this endpoint")
	})

	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })

	authed, optional := h.Auth.Required(), h.Auth.Optional()
	api := r.Group("/api")
	api.POST("/users", h.Users.Register)
	api.POST("/users/login", h.Users.Login)
	api.POST("/users/login/code/send", h.CodeLogin.Send)
	api.POST("/users/login/code", h.CodeLogin.Login)
	api.GET("/user", authed, h.Users.Current)
	api.PUT("/user", authed, h.Users.Update)
	api.GET("/user/articles", authed, h.Articles.Mine)

	api.GET("/profiles/:username", optional, h.Profiles.Get)
	api.POST("/profiles/:username/follow", authed, h.Profiles.Follow)
	api.DELETE("/profiles/:username/follow", authed, h.Profiles.Unfollow)

	api.GET("/articles", optional, h.Articles.List)
	api.POST("/articles", authed, h.Articles.Create)
	api.GET("/articles/feed", authed, h.Articles.Feed)
	api.GET("/articles/hot", optional, h.Hot.List)
	api.GET("/articles/:slug", optional, h.Articles.Get)
	api.PUT("/articles/:slug", authed, h.Articles.Update)
	api.DELETE("/articles/:slug", authed, h.Articles.Delete)
	api.POST("/articles/:slug/publish", authed, h.Articles.Publish)
	api.POST("/articles/:slug/withdraw", authed, h.Articles.Withdraw)
	api.POST("/articles/:slug/favorite", authed, h.Articles.Favorite)
	api.DELETE("/articles/:slug/favorite", authed, h.Articles.Unfavorite)
	api.GET("/articles/:slug/comments", optional, h.Comments.List)
	api.POST("/articles/:slug/comments", authed, h.Comments.Add)
	api.DELETE("/articles/:slug/comments/:id", authed, h.Comments.Delete)
	api.GET("/tags", h.Articles.Tags)

	api.POST("/articles/:slug/collect", authed, h.Collections.Collect)
	api.DELETE("/articles/:slug/collect", authed, h.Collections.Uncollect)
	api.POST("/collections", authed, h.Collections.Create)
	api.GET("/collections", authed, h.Collections.List)
	api.PATCH("/collections/:id", authed, h.Collections.Update)
	api.DELETE("/collections/:id", authed, h.Collections.Delete)
	api.GET("/collections/:id/articles", authed, h.Collections.Articles)
	api.GET("/user/history", authed, h.Collections.History)
	api.GET("/user/notifications", authed, h.Notifications.List)
	api.POST("/user/notifications/read", authed, h.Notifications.MarkRead)
	return r
}
