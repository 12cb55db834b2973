package job

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the spans of this package (the instrumentation scope).
const tracerName = "github.com/inkwell-dev/inkwell/job"

// tracer is taken from the global provider at each use: ioc.NewTracing sets it when tracing is
// on; off, the spans below are no-ops.
func tracer() trace.Tracer { return otel.Tracer(tracerName) }
