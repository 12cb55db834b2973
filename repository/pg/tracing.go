package pg

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// TraceParent is the W3C traceparent of ctx's span, or "" when there is none (tracing off), for
// the rows that hand work on to other processes (outbox events, jobs). Only the traceparent is
// kept: baggage and tracestate are not carried across the asynchronous hop.
func TraceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}
