package web

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDocument is the hand-written OpenAPI 3.1 description of every route NewRouter mounts;
// openapi_test.go keeps the two in step.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// serveOpenAPI handles GET /api/openapi.yaml.
func serveOpenAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/yaml", openAPIDocument)
}
