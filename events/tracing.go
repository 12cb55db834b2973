package events

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TraceParentField is the stream entry field that carries the W3C traceparent of the span that
// wrote the entry (the outbox relay's publish span), so the consumer's work joins that trace.
const TraceParentField = "traceparent"

// tracerName names the spans of this package (the instrumentation scope).
const tracerName = "github.com/inkwell-dev/inkwell/events"

// tracer is taken from the global provider at each use: ioc.NewTracing sets it when tracing is
// on (and puts the no-op one back at shutdown); off, a span costs a few nanoseconds of no-op.
func tracer() trace.Tracer { return otel.Tracer(tracerName) }

// TraceParent is the W3C traceparent of ctx's span, or "" when there is none.
func TraceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c[TraceParentField]
}

// WithTraceParent returns ctx with the span tp names as its remote parent; ctx as it is when tp
// is empty or malformed.
func WithTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{TraceParentField: tp})
}

// entryTraceParent is the traceparent an entry carries, or "".
func entryTraceParent(m Message) string {
	tp, _ := m.Values[TraceParentField].(string)
	return tp
}

// StartEntry starts the span of one entry's work inside a consumer's batch (ctx holds the batch
// span): a child of the span that wrote the entry when it carries one, linked to the batch, so
// the work shows in the writer's trace (the request that published the article); otherwise a
// child of the batch span.
func StartEntry(ctx context.Context, name string, m Message) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("messaging.message.id", m.ID)),
	}
	if tp := entryTraceParent(m); tp != "" {
		if remote := trace.SpanContextFromContext(WithTraceParent(context.Background(), tp)); remote.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: trace.SpanContextFromContext(ctx)}))
			ctx = trace.ContextWithRemoteSpanContext(ctx, remote)
		}
	}
	return tracer().Start(ctx, name, opts...)
}

// startBatch starts the span of one batch a consumer hands to its handler, linked to the span
// that wrote each entry (a batch has many parents, so they are links, not the parent).
func (c *Consumer) startBatch(ctx context.Context, msgs []Message) (context.Context, trace.Span) {
	var links []trace.Link
	for _, m := range msgs {
		if tp := entryTraceParent(m); tp != "" {
			if sc := trace.SpanContextFromContext(WithTraceParent(context.Background(), tp)); sc.IsValid() {
				links = append(links, trace.Link{SpanContext: sc})
			}
		}
	}
	return tracer().Start(ctx, "consume "+c.cfg.Group,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithNewRoot(), // a batch is its own trace: its entries come from many
		trace.WithLinks(links...),
		trace.WithAttributes(
			attribute.String("messaging.system", "redis"),
			attribute.String("messaging.destination.name", c.cfg.Stream),
			attribute.String("messaging.consumer.group.name", c.cfg.Group),
			attribute.Int("messaging.batch.message_count", len(msgs)),
		))
}
