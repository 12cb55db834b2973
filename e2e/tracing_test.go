package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/ioc"
)

// The instrumentation scopes of the PostgreSQL and Redis spans.
const (
	scopePostgres = "github.com/exaring/otelpgx"
	scopeRedis    = "github.com/redis/go-redis/extra/redisotel"
)

// traceparent returns a W3C traceparent header of a fresh trace and the trace and span ids it
// names, so a test finds the spans of its own request among everything the app exported.
func traceparent(t *testing.T) (header, traceID, spanID string) {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	traceID, spanID = hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	return "00-" + traceID + "-" + spanID + "-01", traceID, spanID
}

// spanTree indexes one trace's spans by id.
type spanTree map[string]apptest.Span

func treeOf(spans []apptest.Span) spanTree {
	tr := spanTree{}
	for _, s := range spans {
		tr[s.SpanID] = s
	}
	return tr
}

// under reports whether s descends from the span ancestor (its parent, its parent's parent...).
func (tr spanTree) under(s apptest.Span, ancestor string) bool {
	for seen := 0; s.ParentID != "" && seen < len(tr); seen++ {
		if s.ParentID == ancestor {
			return true
		}
		p, ok := tr[s.ParentID]
		if !ok {
			return false
		}
		s = p
	}
	return false
}

// named returns the spans called name.
func (tr spanTree) named(name string) []apptest.Span {
	var out []apptest.Span
	for _, s := range tr {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// descendants returns the spans of scope under ancestor.
func (tr spanTree) descendants(ancestor, scope string) []apptest.Span {
	var out []apptest.Span
	for _, s := range tr {
		if s.Scope == scope && tr.under(s, ancestor) {
			out = append(out, s)
		}
	}
	return out
}

func (tr spanTree) dump() string {
	var b strings.Builder
	for _, s := range tr {
		b.WriteString(s.SpanID + " ← " + s.ParentID + "  " + s.Name + "  [" + s.Scope + "]\n")
	}
	return b.String()
}

// TestTracingSpanTreeOfOneRequest exports to an in-process OTLP receiver and checks the spans of
// one publishing request: the server span is named by the route template and continues the
// trace of the caller, a trusted proxy; the request's PostgreSQL statements and Redis commands are its descendants; the
// outbox relay's publish of the event, the notifications consumer's work on it and that work's
// statements are in the same trace, each under the one before. A read is named by its template,
// never its slug.
func TestTracingSpanTreeOfOneRequest(t *testing.T) {
	// Not parallel: the OTEL_* variables are the process's.
	inProcess(t, "wires its own instance for the receiver")
	recv := apptest.StartOTLPReceiver(t)
	// The test's requests come from loopback, as a proxy's would: trusted to hand its trace on.
	app := &testApp{apptest.Start(t, func(c *ioc.Config) { c.Server.TrustedProxies = "127.0.0.1" })}
	author := app.Register("traced_author")
	reader := app.Register("traced_reader")
	app.Do("POST", "/api/profiles/traced_author/follow", reader, nil).Expect(t, http.StatusOK)

	header, traceID, callerSpan := traceparent(t)
	art := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Traced from the start"), "traceparent", header).
		Expect(t, http.StatusCreated))
	slug := art["slug"].(string)
	readHeader, readTrace, _ := traceparent(t)
	app.Do("GET", "/api/articles/"+slug, "", nil, "traceparent", readHeader).Expect(t, http.StatusOK)
	app.awaitNotifications(reader, 1)
	app.Stop() // drains the requests and workers, then flushes the exporter

	tr := treeOf(recv.Trace(traceID))
	servers := tr.named("POST /api/articles")
	if len(servers) != 1 {
		t.Fatalf("want one server span named by the route template in the trace, got %d:\n%s", len(servers), tr.dump())
	}
	srv := servers[0]
	if srv.Kind != "SPAN_KIND_SERVER" || srv.ParentID != callerSpan || srv.Service != "inkwell" || srv.Attrs["http.route"] != "/api/articles" {
		t.Fatalf("server span %+v: want kind server, the caller's span as parent, service inkwell, http.route", srv)
	}
	if sql := tr.descendants(srv.SpanID, scopePostgres); len(sql) == 0 {
		t.Fatalf("no PostgreSQL span under the request:\n%s", tr.dump())
	}
	if rds := tr.descendants(srv.SpanID, scopeRedis); len(rds) == 0 {
		t.Fatalf("no Redis span under the request:\n%s", tr.dump())
	}
	for _, s := range tr.descendants(srv.SpanID, scopePostgres) {
		if s.Name == "ArticleInsert" {
			goto inserted
		}
	}
	t.Fatalf("no span named after the sqlc query ArticleInsert:\n%s", tr.dump())
inserted:

	// publish request → outbox relay → stream → notifications consumer, one trace.
	pubs := tr.named("outbox publish article.published")
	if len(pubs) != 1 || pubs[0].ParentID != srv.SpanID || pubs[0].Kind != "SPAN_KIND_PRODUCER" {
		t.Fatalf("want the relay's publish span as a child of the request's:\n%s", tr.dump())
	}
	if len(tr.descendants(pubs[0].SpanID, scopeRedis)) == 0 || len(tr.descendants(pubs[0].SpanID, scopePostgres)) == 0 {
		t.Fatalf("want the relay's XADD and its mark under its publish span:\n%s", tr.dump())
	}
	notes := tr.named("notify followers article.published")
	if len(notes) != 1 || notes[0].ParentID != pubs[0].SpanID || notes[0].Kind != "SPAN_KIND_CONSUMER" || len(notes[0].Links) != 1 {
		t.Fatalf("want the consumer's span as a child of the publish span, linked to its batch:\n%s", tr.dump())
	}
	if len(tr.descendants(notes[0].SpanID, scopePostgres)) == 0 {
		t.Fatalf("want the consumer's statements under its span:\n%s", tr.dump())
	}
	// The batch span is a trace of its own, linked to the publish span.
	batch := false
	for _, s := range recv.Spans() {
		if s.Name == "consume notifications" && s.SpanID == strings.Split(notes[0].Links[0], "/")[1] {
			batch = strings.Contains(strings.Join(s.Links, " "), traceID+"/"+pubs[0].SpanID)
		}
	}
	if !batch {
		t.Fatalf("want the consumer's batch span linked to the publish span")
	}

	rt := treeOf(recv.Trace(readTrace))
	if reads := rt.named("GET /api/articles/:slug"); len(reads) != 1 || reads[0].Attrs["http.route"] != "/api/articles/:slug" {
		t.Fatalf("want the read's server span named by its template:\n%s", rt.dump())
	}
	for _, s := range recv.Spans() {
		if strings.Contains(s.Name, slug) {
			t.Fatalf("a span name holds the slug: %q", s.Name)
		}
	}
}

// TestTracingIgnoresUntrustedTraceContext: a traceparent from a caller that is not a trusted proxy
// neither chooses the trace nor the sampling decision. Its request is a trace of its own with the
// caller's span as a link; and with a sampler that records no new trace (parent-based, off), the
// caller's "sampled" flag does not make us record one.
func TestTracingIgnoresUntrustedTraceContext(t *testing.T) {
	// Not parallel: the OTEL_* variables are the process's.
	recv := apptest.StartOTLPReceiver(t)
	app := &testApp{apptest.Start(t)} // no trusted proxies: the loopback caller is a client
	header, clientTrace, clientSpan := traceparent(t)
	app.Do("GET", "/api/tags", "", nil, "traceparent", header).Expect(t, http.StatusOK)
	app.Stop()
	if spans := recv.Trace(clientTrace); len(spans) != 0 {
		t.Fatalf("%d spans in the client's trace, want none:\n%s", len(spans), treeOf(spans).dump())
	}
	var server *apptest.Span
	for _, s := range recv.Spans() {
		if s.Name == "GET /api/tags" {
			server = &s
		}
	}
	if server == nil || server.ParentID != "" || len(server.Links) != 1 || server.Links[0] != clientTrace+"/"+clientSpan {
		t.Fatalf("server span %+v: want a root linked to the client's span %s/%s", server, clientTrace, clientSpan)
	}

	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_off")
	quiet := &testApp{apptest.Start(t)}
	header, _, _ = traceparent(t)
	before := len(recv.Spans())
	quiet.Do("GET", "/api/tags", "", nil, "traceparent", header).Expect(t, http.StatusOK)
	quiet.Stop()
	if spans := recv.Spans()[before:]; len(spans) != 0 {
		t.Fatalf("%d spans exported under a sampler that records no new trace: the client's sampled flag forced them:\n%s",
			len(spans), treeOf(spans).dump())
	}
}
