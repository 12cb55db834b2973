package job_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
)

// A job enqueued inside a span runs in a span of its own that is a child of it, in the same
// trace, across the queue table (jobs.traceparent).
func TestJobRunJoinsTheEnqueuingTrace(t *testing.T) {
	// Not parallel: the tracer provider is the process's.
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()); _ = tp.Shutdown(context.Background()) })

	e := newQueueEnv(t, 4)
	const queue = "traced"
	ctx, request := tp.Tracer("test").Start(context.Background(), "POST /api/users/login/code/send")
	if added, err := e.queue.Enqueue(ctx, domain.NewJob{Queue: queue, Kind: "work"}); err != nil || !added {
		t.Fatalf("enqueue: %v %v", added, err)
	}
	request.End()

	ran := make(chan trace.SpanContext, 1)
	r := newRunner(t, e.queue, runnerOpts{Queue: queue, Poll: 10 * time.Millisecond}, map[string]job.JobHandler{
		"work": func(ctx context.Context, _ domain.Job) error { ran <- trace.SpanContextFromContext(ctx); return nil },
	})
	stop := runInBackground(t, r)
	got := testenv.Recv(t, ran, "the job to run")
	stop()

	if got.TraceID() != request.SpanContext().TraceID() {
		t.Fatalf("the job ran in trace %s, want the enqueuing request's %s", got.TraceID(), request.SpanContext().TraceID())
	}
	for _, s := range rec.Ended() {
		if s.Name() == "job traced/work" {
			if s.Parent().SpanID() != request.SpanContext().SpanID() || s.SpanKind() != trace.SpanKindConsumer {
				t.Fatalf("job span's parent %s kind %s, want the request span %s", s.Parent().SpanID(), s.SpanKind(), request.SpanContext().SpanID())
			}
			return
		}
	}
	t.Fatal("no span named job traced/work")
}
