package web_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/inkwell-dev/inkwell/web"
)

// BenchmarkCachedArticleReadTracingOn is BenchmarkCachedArticleRead with tracing on, every
// request sampled, into an in-memory exporter (the cost of the server span alone; exporting is
// off the request path).
func BenchmarkCachedArticleReadTracingOn(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	serveReads(b, benchRouter(web.RouterConfig{Tracer: tp}))
}
