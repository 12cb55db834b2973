package ioc

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
)

// Tracing is the process's OpenTelemetry tracing, configured only through the standard OTEL_*
// environment variables. It is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER names an exporter other than otlp
// or none, and off otherwise or with OTEL_SDK_DISABLED=true.
//
// Off means off: Provider is nil, and the HTTP middleware, the pgx tracer and the Redis hook are
// not installed at all, so the request path runs exactly the code it ran before tracing existed
// (a no-op provider would still cost a context and a span header parse per request).
type Tracing struct {
	// Provider is the SDK's tracer provider; nil when tracing is off.
	Provider trace.TracerProvider
}

// On reports whether spans are recorded and exported.
func (t *Tracing) On() bool { return t != nil && t.Provider != nil }

// NewTracing builds the tracer provider from the OTEL_* variables: the exporter
// (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf by default, or grpc), the
// sampler (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), the resource (OTEL_SERVICE_NAME,
// "inkwell" by default, and OTEL_RESOURCE_ATTRIBUTES). It installs the W3C tracecontext and
// baggage propagators either way, and, when on, makes the provider the global one (the
// background work in events/ and job/ takes its tracers from there). The cleanup flushes the
// spans still buffered, within 5 s, and puts the no-op provider back.
func NewTracing(log *slog.Logger) (*Tracing, func(), error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if !tracingWanted() {
		return &Tracing{}, func() {}, nil
	}
	ctx := context.Background()
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry span exporter (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*): %w", err)
	}
	// Later options win: the default name, then what OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES say.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("inkwell")), resource.WithTelemetrySDK(),
		resource.WithHost(), resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	// The SDK reads OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_* itself.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	// The SDK reports its errors (an export to a collector that is down) through the global
	// handler, which by default prints plain text to stderr: in the log stream, as JSON.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("OpenTelemetry", "err", err) }))
	log.Info("tracing on", "exporter", envOr("OTEL_TRACES_EXPORTER", "otlp"),
		"endpoint", envOr("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")),
		"protocol", envOr("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"), "sampler", envOr("OTEL_TRACES_SAMPLER", "parentbased_always_on"))
	cleanup := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("tracing: spans not flushed at shutdown", "err", err)
		}
		otel.SetTracerProvider(noop.NewTracerProvider())
		log.Info("tracing flushed")
	}
	return &Tracing{Provider: tp}, cleanup, nil
}

// tracingWanted says whether the environment asks for spans (see Tracing).
func tracingWanted() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch exp := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false
	case "", "otlp":
		return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default: // console, or one a later version registers: asked for by name
		return true
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// TracePostgres is a configure function for OpenPgPool: when tracing is on, every statement of
// the pool becomes a span (named by the statement's first word, with its text, which holds no
// values: sqlc sends parameters apart), next to any tracer the pool has already.
func (t *Tracing) TracePostgres(pcfg *pgxpool.Config) {
	if !t.On() {
		return
	}
	ot := otelpgx.NewTracer(otelpgx.WithTracerProvider(childOnly{tp: t.Provider}), otelpgx.WithSpanNameFunc(sqlcName))
	if pcfg.ConnConfig.Tracer == nil {
		pcfg.ConnConfig.Tracer = ot
		return
	}
	pcfg.ConnConfig.Tracer = multitracer.New(pcfg.ConnConfig.Tracer, ot)
}

// sqlcName names a statement's span after its sqlc query ("-- name: ArticleGetBySlug :one"
// starts every generated statement), or after its first word for hand-written SQL.
func sqlcName(stmt string) string {
	if rest, ok := strings.CutPrefix(stmt, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok {
			return name
		}
	}
	if f := strings.Fields(stmt); len(f) > 0 {
		return strings.ToUpper(f[0])
	}
	return "query"
}

// TraceRedis makes every Redis command of rdb a span when tracing is on. Command arguments are
// left out of the spans: they hold session ids, code hashes and user data.
func (t *Tracing) TraceRedis(rdb redis.UniversalClient) error {
	if !t.On() {
		return nil
	}
	return redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(childOnly{tp: t.Provider}), redisotel.WithDBStatement(false))
}

// childOnly is a tracer provider whose tracers start spans only inside a recording span (a
// request's, a job's): the pools and the Redis client also serve pollers (the consumers' XREADGROUP
// every 100 ms, the relay's claim), whose statements alone would each be a trace of one span.
type childOnly struct {
	embedded.TracerProvider
	tp trace.TracerProvider
}

func (p childOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childOnlyTracer{t: p.tp.Tracer(name, opts...)}
}

type childOnlyTracer struct {
	embedded.Tracer
	t trace.Tracer
}

func (t childOnlyTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if parent := trace.SpanFromContext(ctx); !parent.IsRecording() {
		return ctx, noop.Span{}
	}
	return t.t.Start(ctx, name, opts...)
}
