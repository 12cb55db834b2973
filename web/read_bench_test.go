package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
)

// cachedArticles answers Get from memory, as a warm cache does: what is left to measure is the
// router, the middlewares and the handler.
type cachedArticles struct {
	web.ArticleService
	view domain.ArticleView
}

func (c cachedArticles) Get(context.Context, int64, string) (domain.ArticleView, error) {
	return c.view, nil
}

// benchRouter is the router of `inkwell serve` around a cached article read, with cfg's settings.
func benchRouter(cfg web.RouterConfig) http.Handler {
	cfg.MaxBodyBytes = maxBodyBytes
	log := slog.New(slog.DiscardHandler)
	articles := cachedArticles{view: dragon}
	return web.NewRouter(cfg, log, web.Handlers{
		Auth: web.NewAuthenticator(nil, log), Articles: web.NewArticleHandler(articles, nil, log),
	})
}

func serveReads(b *testing.B, h http.Handler) {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, "/api/articles/how-to-train-your-dragon", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkCachedArticleRead is an anonymous GET /api/articles/:slug through the whole
// middleware chain with tracing off (the default: no OTEL_EXPORTER_OTLP_ENDPOINT). It compiles
// unchanged against the commits before tracing existed, so both can be compared
// (docs/BENCHMARKS.md, "Tracing off").
func BenchmarkCachedArticleRead(b *testing.B) {
	serveReads(b, benchRouter(web.RouterConfig{}))
}
