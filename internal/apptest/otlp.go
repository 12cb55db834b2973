package apptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one span an OTLPReceiver received, with ids in hex as Jaeger shows them.
type Span struct {
	TraceID, SpanID, ParentID string
	Name, Scope, Service      string
	Kind                      string // SPAN_KIND_SERVER, SPAN_KIND_CLIENT, ...
	Attrs                     map[string]string
	Links                     []string // "traceid/spanid" of each link
	Error                     bool     // status code ERROR
}

// OTLPReceiver is an in-process OTLP/HTTP trace collector: it decodes the protobuf
// ExportTraceServiceRequest the SDK's exporter posts to /v1/traces and keeps every span.
type OTLPReceiver struct {
	URL   string
	mu    sync.Mutex
	spans []Span
}

// StartOTLPReceiver serves a receiver until the test ends and points the OTEL_* variables at it
// (OTLP over HTTP/protobuf, batches sent every 50 ms), so an app wired afterwards exports its
// spans there. The variables are process-wide: the test must not be parallel (t.Setenv refuses).
func StartOTLPReceiver(t *testing.T) *OTLPReceiver {
	t.Helper()
	r := &OTLPReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.export))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	return r
}

func (r *OTLPReceiver) export(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Scope: ss.GetScope().GetName(),
					Service: service, Kind: s.GetKind().String(), Attrs: map[string]string{},
					Error: s.GetStatus().GetCode().String() == "STATUS_CODE_ERROR",
				}
				for _, kv := range s.GetAttributes() {
					v := kv.GetValue()
					sp.Attrs[kv.GetKey()] = v.GetStringValue()
					if _, ok := v.GetValue().(*commonpb.AnyValue_IntValue); ok {
						sp.Attrs[kv.GetKey()] = strconv.FormatInt(v.GetIntValue(), 10)
					}
				}
				for _, l := range s.GetLinks() {
					sp.Links = append(sp.Links, hex.EncodeToString(l.GetTraceId())+"/"+hex.EncodeToString(l.GetSpanId()))
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans is every span received so far.
func (r *OTLPReceiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Trace is the spans of one trace.
func (r *OTLPReceiver) Trace(traceID string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}
