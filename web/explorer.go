package web

import (
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5/static"
	"github.com/swaggest/swgui/v5emb"
)

// The API explorer: Swagger UI over the document GET /api/openapi.yaml serves. Its assets come
// from github.com/swaggest/swgui's v5 build, embedded in the binary through go:embed, so the page
// works offline and behind any firewall; nothing is fetched from a CDN (the build tag swguicdn
// would switch that package to one: never build with it). "Try it out" sends its requests to the
// document's server (/api) on the page's own origin.
const (
	explorerPath     = "/api/docs"
	explorerDocument = "/api/openapi.yaml"
)

// explorer serves the page and its assets; built on first use (a CLI subcommand never renders
// it), once: the page's inputs are all constants.
var explorer = sync.OnceValue(newExplorer)

type explorerPage struct {
	assets http.Handler    // swgui's handler: index and gzip-negotiated static files
	known  map[string]bool // asset names under explorerPath/ ("swagger-ui.css", ...)
	index  []byte          // the rendered page, served with csp
	csp    string
}

func newExplorer() *explorerPage {
	h := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "inkwell API",
		SwaggerJSON: explorerDocument,
		BasePath:    explorerPath + "/",
		SettingsUI:  map[string]string{"displayRequestDuration": "true"},
	})
	e := &explorerPage{assets: h, known: map[string]bool{}}
	entries, err := fs.ReadDir(static.FS, ".")
	if err != nil {
		panic(err) // an embedded directory always reads
	}
	for _, d := range entries {
		e.known[strings.TrimSuffix(d.Name(), ".gz")] = true // statigz serves x.gz as x
	}
	// The page never changes, so it is rendered once and its inline scripts are allowed by hash:
	// the policy lets the page run its own code and reach its own origin, nothing else.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, explorerPath+"/", nil))
	if rec.Code != http.StatusOK {
		panic("swgui renders no page: " + strconv.Itoa(rec.Code))
	}
	e.index = rec.Body.Bytes()
	e.csp = explorerCSP(e.index)
	return e
}

var inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)

// explorerCSP allows the page's own inline scripts (by hash), its assets and the API on its own
// origin. Swagger UI sets inline styles and uses data: images for its icons, so those stay allowed.
func explorerCSP(page []byte) string {
	scripts := []string{"'self'"}
	for _, m := range inlineScript.FindAllSubmatch(page, -1) {
		sum := sha256.Sum256(m[1])
		scripts = append(scripts, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + strings.Join(scripts, " "),
		"style-src 'self' 'unsafe-inline'",
		"img-src 'self' data:",
		"font-src 'self'",
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// serveExplorer handles GET /api/docs and GET /api/docs/*asset: the page itself at /api/docs and
// /api/docs/, the embedded assets under /api/docs/, and any other name a 404 in the error shape.
func serveExplorer(c *gin.Context) {
	e := explorer()
	name := strings.TrimPrefix(c.Param("asset"), "/")
	if name == "" {
		h := c.Writer.Header()
		h.Set("Content-Security-Policy", e.csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "text/html; charset=utf-8", e.index)
		return
	}
	if !e.known[name] {
		abortWith(c, http.StatusNotFound, "body", "no such endpoint")
		return
	}
	e.assets.ServeHTTP(c.Writer, c.Request)
}
