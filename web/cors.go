package web

import (
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"
)

// CORSConfig says which browser origins may call the API. AllowAll (dev) echoes any origin.
type CORSConfig struct {
	AllowAll bool
	Origins  []string
}

const (
	corsAllowMethods  = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
	corsAllowHeaders  = "Authorization, Content-Type, Idempotency-Key, X-Request-Id"
	corsExposeHeaders = "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Idempotent-Replayed, X-Request-Id"
)

// cors answers preflight requests and marks responses readable by allowed origins, so a RealWorld
// front end served from another origin can use the API. A disallowed origin gets no CORS headers
// (the browser then refuses the response); non-browser clients are unaffected.
func cors(cfg CORSConfig) gin.HandlerFunc {
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" {
			c.Next()
			return
		}
		h := c.Writer.Header()
		h.Add("Vary", "Origin")
		if !cfg.AllowAll && !slices.Contains(cfg.Origins, origin) {
			c.Next()
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", "600")
			c.AbortWithStatus(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		c.Next()
	}
}
