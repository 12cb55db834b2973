package web

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/wire"
)

// ProviderSet builds the handlers and the router.
var ProviderSet = wire.NewSet(NewAuthenticator, NewUserHandler, NewProfileHandler, NewRouter)

// RouterConfig holds the HTTP settings the router needs.
type RouterConfig struct {
	MaxBodyBytes int64
}

// NewRouter returns the gin engine with every route of the API.
func NewRouter(cfg RouterConfig, log *slog.Logger, authn *Authenticator, users *UserHandler, profiles *ProfileHandler) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(recoverJSON(log), accessLog(log), limitBody(cfg.MaxBodyBytes))
	r.NoRoute(func(c *gin.Context) { abortWith(c, http.StatusNotFound, "body", "no such endpoint") })
	r.NoMethod(func(c *gin.Context) {
		abortWith(c, http.StatusMethodNotAllowed, "body", "method not allowed on this endpoint")
	})

	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })

	api := r.Group("/api")
	api.POST("/users", users.Register)
	api.POST("/users/login", users.Login)
	api.GET("/user", authn.Required(), users.Current)
	api.PUT("/user", authn.Required(), users.Update)

	api.GET("/profiles/:username", authn.Optional(), profiles.Get)
	api.POST("/profiles/:username/follow", authn.Required(), profiles.Follow)
	api.DELETE("/profiles/:username/follow", authn.Required(), profiles.Unfollow)
	return r
}
