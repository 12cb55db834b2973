package web

import (
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ctxClientTrace is where an untrusted caller's trace context waits for the request's span.
const ctxClientTrace = "inkwell.clientTrace"

// traceRequests makes each request a server span named by its method and route template
// ("GET /api/articles/:slug", never the raw path). The caller's W3C trace context (traceparent,
// tracestate, baggage) is continued only when the request comes straight from a trusted proxy
// (INKWELL_TRUSTED_PROXIES): anyone else's traceparent would choose the trace id and, with the
// parent-based sampler, force every such request to be recorded and exported. Their request
// starts a trace of its own, which the sampler decides on, and keeps the client's span as a link,
// so a client's trace can still be found from ours. The probes are left out: they are frequent
// and say nothing about a request's path through the code.
//
// The handlers are two, registered in this order: the first picks the middleware (continue or
// start afresh) and notes an untrusted client's context, the second links it to the span the
// first started.
func traceRequests(tp trace.TracerProvider, trustedProxies []string) []gin.HandlerFunc {
	probes := otelgin.WithGinFilter(func(c *gin.Context) bool {
		switch c.FullPath() {
		case "/healthz", "/readyz":
			return false
		}
		return true
	})
	follow := otelgin.Middleware("inkwell", otelgin.WithTracerProvider(tp), probes,
		otelgin.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
	fresh := otelgin.Middleware("inkwell", otelgin.WithTracerProvider(tp), probes,
		otelgin.WithPropagators(propagation.NewCompositeTextMapPropagator()))
	trusted := parsePrefixes(trustedProxies)
	choose := func(c *gin.Context) {
		if trusted.contain(c.RemoteIP()) {
			follow(c)
			return
		}
		if c.GetHeader("traceparent") != "" {
			remote := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header)))
			if remote.IsValid() {
				c.Set(ctxClientTrace, remote)
			}
		}
		fresh(c)
	}
	link := func(c *gin.Context) {
		if v, ok := c.Get(ctxClientTrace); ok {
			trace.SpanFromContext(c.Request.Context()).AddLink(trace.Link{SpanContext: v.(trace.SpanContext),
				Attributes: []attribute.KeyValue{attribute.String("inkwell.link", "client traceparent, not trusted")}})
		}
		c.Next()
	}
	return []gin.HandlerFunc{choose, link}
}

// prefixes is a parsed list of IPs and CIDRs.
type prefixes []netip.Prefix

// parsePrefixes reads INKWELL_TRUSTED_PROXIES' entries (checked at start by
// ioc.ParseTrustedProxies); an entry that does not parse trusts nothing.
func parsePrefixes(entries []string) prefixes {
	var out prefixes
	for _, e := range entries {
		if strings.Contains(e, "/") {
			if p, err := netip.ParsePrefix(e); err == nil {
				out = append(out, p.Masked())
			}
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out
}

// contain reports whether ip (the connection's peer) is in one of the prefixes.
func (ps prefixes) contain(ip string) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
