package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/mock/gomock"
	"gopkg.in/yaml.v3"

	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

// openAPIFile is the document the router embeds and serves at GET /api/openapi.yaml.
const openAPIFile = "openapi.yaml"

// realWorldSpec is the RealWorld contract, vendored (testdata/realworld/README.md).
const realWorldSpec = "testdata/realworld/openapi.yml"

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// apiDoc is a parsed OpenAPI document.
type apiDoc struct {
	raw   []byte
	root  map[string]any
	byKey map[string]apiOp // "GET /api/articles/{slug}" -> operation
}

// apiOp is one operation of the document.
type apiOp struct {
	Method   string // upper case
	Path     string // as the router sees it: the server's path prefix plus the template
	Template string // the key under paths:
	Op       map[string]any
	Item     map[string]any
}

func (o apiOp) key() string { return o.Method + " " + o.Path }

// loadOpenAPI parses openapi.yaml once per test binary.
var loadOpenAPI = sync.OnceValues(func() (*apiDoc, error) {
	b, err := os.ReadFile(openAPIFile)
	if err != nil {
		return nil, err
	}
	return parseAPIDoc(b)
})

func mustOpenAPI(t testing.TB) *apiDoc {
	t.Helper()
	d, err := loadOpenAPI()
	if err != nil {
		t.Fatalf("load %s: %v", openAPIFile, err)
	}
	return d
}

func parseAPIDoc(b []byte) (*apiDoc, error) {
	var root map[string]any
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	d := &apiDoc{raw: b, root: root, byKey: map[string]apiOp{}}
	for template, v := range obj(root["paths"]) {
		item := obj(v)
		prefix := serverPath(item["servers"])
		if prefix == "" {
			prefix = serverPath(root["servers"])
		}
		for _, m := range httpMethods {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			o := apiOp{Method: strings.ToUpper(m), Path: strings.TrimSuffix(prefix, "/") + template, Template: template, Op: op, Item: item}
			if _, dup := d.byKey[o.key()]; dup {
				return nil, fmt.Errorf("%s is described twice", o.key())
			}
			d.byKey[o.key()] = o
		}
	}
	return d, nil
}

// serverPath is the path of the first server URL ("" when there is none).
func serverPath(servers any) string {
	list, _ := servers.([]any)
	if len(list) == 0 {
		return ""
	}
	u, _ := obj(list[0])["url"].(string)
	if i := strings.Index(u, "://"); i >= 0 { // absolute: keep the path only
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			u = u[j:]
		} else {
			u = "/"
		}
	}
	return u
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func (d *apiDoc) ops() []apiOp {
	return slices.SortedFunc(maps.Values(d.byKey), func(a, b apiOp) int { return strings.Compare(a.key(), b.key()) })
}

// resolve follows a local $ref ("#/components/...") chain; v itself when it is no reference.
func (d *apiDoc) resolve(v any) (any, error) {
	for range 32 {
		ref, ok := obj(v)["$ref"].(string)
		if !ok {
			return v, nil
		}
		if !strings.HasPrefix(ref, "#/") {
			return nil, fmt.Errorf("$ref %q is not local", ref)
		}
		cur := any(d.root)
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			next, ok := obj(cur)[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q names nothing", ref)
			}
			cur = next
		}
		v = cur
	}
	return nil, errors.New("$ref chain too long")
}

func (d *apiDoc) mustResolve(v any) map[string]any {
	r, err := d.resolve(v)
	if err != nil {
		panic(err)
	}
	return obj(r)
}

// params are the operation's parameters, path-level ones first, references resolved.
func (d *apiDoc) params(o apiOp) []map[string]any {
	var out []map[string]any
	for _, src := range []any{o.Item["parameters"], o.Op["parameters"]} {
		list, _ := src.([]any)
		for _, p := range list {
			out = append(out, d.mustResolve(p))
		}
	}
	return out
}

func (d *apiDoc) paramNames(o apiOp, in string) []string {
	var names []string
	for _, p := range d.params(o) {
		if p["in"] == in {
			names = append(names, p["name"].(string))
		}
	}
	return names
}

// statuses are the response codes the operation documents.
func (d *apiDoc) statuses(o apiOp) map[int]bool {
	out := map[int]bool{}
	for code := range obj(o.Op["responses"]) {
		if n, err := strconv.Atoi(code); err == nil {
			out[n] = true
		}
	}
	return out
}

// response is the documented response of o for status, resolved.
func (d *apiDoc) response(o apiOp, status int) map[string]any {
	r, ok := obj(o.Op["responses"])[strconv.Itoa(status)]
	if !ok {
		return nil
	}
	return d.mustResolve(r)
}

// allRoutes is a router with every handler web.Handlers has, over mocks that expect nothing.
func allRoutes(t *testing.T) []string {
	t.Helper()
	ctrl := gomock.NewController(t)
	m := newAllMocks(ctrl)
	h := m.handlers(slog.New(slog.DiscardHandler))
	hv := reflect.ValueOf(h)
	for i := range hv.NumField() {
		switch f := hv.Field(i); f.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan:
			if !f.IsNil() {
				continue
			}
			// A nil handler may leave its routes unmounted, so the comparison below would miss them.
			t.Errorf("web.Handlers.%s is not set by allMocks.handlers; set it so its routes are mounted", hv.Type().Field(i).Name)
		}
	}
	engine := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, slog.New(slog.DiscardHandler), h)
	var routes []string
	for _, r := range engine.Routes() {
		routes = append(routes, r.Method+" "+ginToOpenAPI(r.Path))
	}
	slices.Sort(routes)
	return routes
}

var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// ginToOpenAPI turns gin's /articles/:slug (and catch-all *path) into /articles/{slug}.
func ginToOpenAPI(p string) string { return ginParam.ReplaceAllString(p, "{$1}") }

func TestOpenAPIDocumentIsOpenAPI31(t *testing.T) {
	t.Parallel()
	d := mustOpenAPI(t)
	if v, _ := d.root["openapi"].(string); !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(v) {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}
	info := obj(d.root["info"])
	for _, k := range []string{"title", "version"} {
		if s, _ := info[k].(string); s == "" {
			t.Errorf("info.%s is missing", k)
		}
	}
	if serverPath(d.root["servers"]) != "/api" {
		t.Errorf("servers[0].url = %q, want /api", serverPath(d.root["servers"]))
	}
	if len(d.byKey) == 0 {
		t.Fatal("the document describes no operation")
	}
	ids := map[string]string{}
	for _, o := range d.ops() {
		id, _ := o.Op["operationId"].(string)
		if id == "" {
			t.Errorf("%s has no operationId", o.key())
		} else if prev, dup := ids[id]; dup {
			t.Errorf("operationId %s is used by %s and %s", id, prev, o.key())
		}
		ids[id] = o.key()
		ok2xx := false
		for s := range d.statuses(o) {
			// A redirect is the success of the sign-in flow's browser steps (start, callback).
			ok2xx = ok2xx || (s >= 200 && s < 300) || s == 302
		}
		if !ok2xx {
			t.Errorf("%s documents no success response", o.key())
		}
	}
}

// TestOpenAPIDescribesEveryRoute compares the router's routes with the document's operations,
// both ways: a route the document does not describe fails, and so does an operation no route
// serves.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	d := mustOpenAPI(t)
	routes := allRoutes(t)
	documented := slices.Sorted(maps.Keys(d.byKey))
	for _, r := range routes {
		if _, ok := slices.BinarySearch(documented, r); !ok {
			t.Errorf("route %s is not in %s", r, openAPIFile)
		}
	}
	for _, k := range documented {
		if _, ok := slices.BinarySearch(routes, k); !ok {
			t.Errorf("%s describes %s, which no route serves", openAPIFile, k)
		}
	}
	t.Logf("%d routes, %d documented operations", len(routes), len(documented))
}

func TestOpenAPIServedByRouter(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t) // no Authorization header and no service call: the document is public
	rec := b.do(httptest.NewRequest(http.MethodGet, "/api/openapi.yaml", nil))
	requireStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("Content-Type = %q, want application/yaml", ct)
	}
	if !bytes.Equal(rec.Body.Bytes(), want) {
		t.Errorf("served document (%d bytes) differs from %s (%d bytes)", rec.Body.Len(), openAPIFile, len(want))
	}
}

// TestOpenAPIReferencesResolve walks the whole document: every $ref must name something.
func TestOpenAPIReferencesResolve(t *testing.T) {
	t.Parallel()
	d := mustOpenAPI(t)
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["$ref"]; ok {
				if _, err := d.resolve(x); err != nil {
					t.Errorf("%s: %v", at, err)
				}
			}
			for k, c := range x {
				walk(c, at+"/"+k)
			}
		case []any:
			for i, c := range x {
				walk(c, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(d.root, "#")
}

// TestOpenAPIPathParameters checks that every {name} of a path template is declared as a required
// path parameter of each of its operations, and that nothing else is.
func TestOpenAPIPathParameters(t *testing.T) {
	t.Parallel()
	d := mustOpenAPI(t)
	braces := regexp.MustCompile(`\{([^}]+)\}`)
	for _, o := range d.ops() {
		var want []string
		for _, m := range braces.FindAllStringSubmatch(o.Template, -1) {
			want = append(want, m[1])
		}
		got := d.paramNames(o, "path")
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s declares path parameters %v, its template has %v", o.key(), got, want)
		}
		for _, p := range d.params(o) {
			if p["in"] == "path" && p["required"] != true {
				t.Errorf("%s: path parameter %v must be required", o.key(), p["name"])
			}
		}
	}
}

// TestOpenAPIMatchesRealWorld checks the RealWorld operations against the RealWorld spec: same
// paths, methods, operationIds and success codes; 401 wherever RealWorld has it; anonymous access
// exactly where RealWorld allows it; and every field RealWorld names, in requests and in success
// responses, with the same type (inkwell may add fields, and may not require more in requests).
func TestOpenAPIMatchesRealWorld(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(realWorldSpec)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := parseAPIDoc(b)
	if err != nil {
		t.Fatalf("parse %s: %v", realWorldSpec, err)
	}
	d := mustOpenAPI(t)
	if !strings.HasSuffix(serverPath(rw.root["servers"]), "/api") {
		t.Fatalf("the RealWorld server is %q; this test assumes it ends in /api", serverPath(rw.root["servers"]))
	}
	for _, ro := range rw.ops() {
		key := ro.Method + " /api" + ro.Template
		o, ok := d.byKey[key]
		if !ok {
			t.Errorf("RealWorld operation %s is missing", key)
			continue
		}
		if o.Op["operationId"] != ro.Op["operationId"] {
			t.Errorf("%s: operationId %v, RealWorld has %v", key, o.Op["operationId"], ro.Op["operationId"])
		}
		ours, theirs := d.statuses(o), rw.statuses(ro)
		for s := range theirs {
			if (s >= 200 && s < 300 || s == 401) && !ours[s] {
				t.Errorf("%s: RealWorld documents %d, the document does not", key, s)
			}
		}
		for s := range ours {
			if s >= 200 && s < 300 && !theirs[s] {
				t.Errorf("%s: success code %d is not RealWorld's", key, s)
			}
		}
		if rwAnon, anon := allowsAnonymous(rw, ro), allowsAnonymous(d, o); rwAnon != anon {
			t.Errorf("%s: anonymous access %v, RealWorld %v", key, anon, rwAnon)
		}
		if rb, ok := ro.Op["requestBody"]; ok {
			ob, ok := o.Op["requestBody"]
			if !ok {
				t.Errorf("%s: RealWorld has a request body, the document has none", key)
			} else {
				covers(t, key+" request", rw, d, jsonSchema(rw, rb), jsonSchema(d, ob), true)
			}
		}
		for s := range theirs {
			if s >= 200 && s < 300 && ours[s] {
				covers(t, fmt.Sprintf("%s %d", key, s), rw, d, jsonSchema(rw, rw.response(ro, s)), jsonSchema(d, d.response(o, s)), false)
			}
		}
	}
}

func allowsAnonymous(d *apiDoc, o apiOp) bool {
	sec, ok := o.Op["security"].([]any)
	if !ok {
		sec, ok = d.root["security"].([]any)
	}
	if !ok || len(sec) == 0 {
		return true
	}
	for _, req := range sec {
		if len(obj(req)) == 0 {
			return true
		}
	}
	return false
}

// jsonSchema is the application/json schema of a request body or response (nil when none).
func jsonSchema(d *apiDoc, bodyOrResponse any) any {
	if bodyOrResponse == nil {
		return nil
	}
	return obj(obj(d.mustResolve(bodyOrResponse)["content"])["application/json"])["schema"]
}

// flatSchema merges a schema's allOf parts (references resolved) into its type, properties and
// required fields.
type flatSchema struct {
	types    []string
	props    map[string]any
	required map[string]bool
	items    any
}

func flatten(d *apiDoc, s any) flatSchema {
	f := flatSchema{props: map[string]any{}, required: map[string]bool{}}
	var add func(s any)
	add = func(s any) {
		m := d.mustResolve(s)
		switch t := m["type"].(type) {
		case string:
			f.types = append(f.types, t)
		case []any:
			for _, x := range t {
				f.types = append(f.types, x.(string))
			}
		}
		maps.Copy(f.props, obj(m["properties"]))
		if r, ok := m["required"].([]any); ok {
			for _, n := range r {
				f.required[n.(string)] = true
			}
		}
		if it, ok := m["items"]; ok {
			f.items = it
		}
		if all, ok := m["allOf"].([]any); ok {
			for _, p := range all {
				add(p)
			}
		}
	}
	add(s)
	return f
}

// covers fails unless ours has every property theirs names, recursively, with the same type. For
// a response ours must also guarantee what theirs requires; for a request ours may require no
// more than theirs does.
func covers(t *testing.T, at string, theirDoc, ourDoc *apiDoc, theirs, ours any, request bool) {
	t.Helper()
	if theirs == nil {
		return
	}
	if ours == nil {
		t.Errorf("%s: RealWorld has a JSON schema, the document has none", at)
		return
	}
	tf, of := flatten(theirDoc, theirs), flatten(ourDoc, ours)
	for _, ty := range tf.types {
		if len(of.types) > 0 && !slices.Contains(of.types, ty) {
			t.Errorf("%s: type %v, RealWorld has %v", at, of.types, tf.types)
		}
	}
	for name, sub := range tf.props {
		osub, ok := of.props[name]
		if !ok {
			t.Errorf("%s: field %s is missing", at, name)
			continue
		}
		covers(t, at+"."+name, theirDoc, ourDoc, sub, osub, request)
	}
	for name := range tf.required {
		if !request && !of.required[name] {
			t.Errorf("%s: RealWorld requires %s in the response, the document does not", at, name)
		}
	}
	for name := range of.required {
		if request && !tf.required[name] {
			t.Errorf("%s: the document requires %s, which RealWorld clients need not send", at, name)
		}
	}
	if tf.items != nil {
		covers(t, at+"[]", theirDoc, ourDoc, tf.items, of.items, request)
	}
}

// TestOpenAPIRequestBodiesMatchHandlers ties each documented request body to its handler through
// the well-formed seed bodies of the fuzz table: every seed matches the documented schema and uses
// only documented fields; together the seeds use every documented field; and every value a seed
// sends reaches the service, which it would not if the handler read the field under another name.
func TestOpenAPIRequestBodiesMatchHandlers(t *testing.T) {
	t.Parallel()
	d := mustOpenAPI(t)
	for _, r := range bodyRoutes {
		t.Run(r.key, func(t *testing.T) {
			t.Parallel()
			o, ok := d.byKey[r.key]
			if !ok {
				t.Fatalf("%s is not in %s", r.key, openAPIFile)
			}
			schema := jsonSchema(d, o.Op["requestBody"])
			if schema == nil {
				// A multipart body (POST /api/uploads): the JSON seeds only prove it is refused
				// with a documented 415 (TestOpenAPIOperationsAnswerAsDocumented); its multipart
				// requests are tested in media_test.go.
				t.Skip("no application/json request body")
			}
			documented := map[string]bool{}
			propertyPaths(d, schema, "", documented)
			sent := map[string]bool{}
			for _, body := range r.good {
				var v any
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					t.Fatalf("seed %s: %v", body, err)
				}
				for _, msg := range validateJSON(d, schema, v, "$") {
					t.Errorf("seed %s: %s", body, msg)
				}
				here := map[string]bool{}
				seedPaths(v, "", here)
				for p := range here {
					if !documented[p] {
						t.Errorf("seed %s sends %s, which the document does not declare", body, p)
					}
					sent[p] = true
				}
				args := &argLog{}
				method, template := splitKey(r.key)
				rec := serveFuzz(t, outcomeRich, method, concretePath(template, defaultPathValues), "", []byte(body), args)
				if rec.Code >= 300 {
					t.Errorf("seed %s: status %d, want success; body %s", body, rec.Code, rec.Body)
					continue
				}
				got := args.JSON()
				dec := json.NewDecoder(strings.NewReader(body))
				dec.UseNumber()
				var exact any
				if err := dec.Decode(&exact); err != nil {
					t.Fatal(err)
				}
				for _, leaf := range seedLeaves(exact) {
					if !regexp.MustCompile(`(^|[^0-9.])` + regexp.QuoteMeta(leaf) + `($|[^0-9.])`).MatchString(got) {
						t.Errorf("seed %s: value %s never reached the service (arguments %s): does the handler read that field?", body, leaf, got)
					}
				}
			}
			for _, p := range slices.Sorted(maps.Keys(documented)) {
				if !sent[p] {
					t.Errorf("documented field %s is in no well-formed seed of bodyRoutes; add it so this test proves the handler reads it", p)
				}
			}
		})
	}
}

// propertyPaths adds the dotted path of every property a schema declares, nested objects included.
func propertyPaths(d *apiDoc, schema any, prefix string, out map[string]bool) {
	if schema == nil {
		return
	}
	for name, sub := range flatten(d, schema).props {
		out[prefix+name] = true
		if f := flatten(d, sub); slices.Contains(f.types, "object") || len(f.props) > 0 {
			propertyPaths(d, sub, prefix+name+".", out)
		}
	}
}

// seedPaths adds the dotted path of every object key in v.
func seedPaths(v any, prefix string, out map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, c := range m {
		out[prefix+k] = true
		seedPaths(c, prefix+k+".", out)
	}
}

// seedLeaves are the scalar values of v as they appear in JSON: strings quoted, numbers literal.
// Empty strings and nulls say nothing about whether a field was read and are left out.
func seedLeaves(v any) []string {
	switch x := v.(type) {
	case map[string]any:
		var out []string
		for _, c := range x {
			out = append(out, seedLeaves(c)...)
		}
		return out
	case []any:
		var out []string
		for _, c := range x {
			out = append(out, seedLeaves(c)...)
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		b, _ := json.Marshal(x)
		return []string{string(b)}
	case json.Number:
		return []string{x.String()}
	case bool:
		return []string{strconv.FormatBool(x)}
	}
	return nil
}

// conformanceModes are the outcomes under which every status must be a documented one: the
// services succeed (with zero or realistic values) and everything else comes from the web layer.
var conformanceModes = []fuzzMode{
	outcomeZero,
	outcomeRich,
	outcomeRich | modeAnonymous,
	outcomeRich | modeBadAuth,
	outcomeRich | modeIdemKey,
	outcomeRich | modeIdemKey | idemReplayed,
	outcomeRich | modeIdemKey | idemInFlight,
	outcomeRich | modeIdemKey | idemMismatch,
	outcomeRich | modeIdemKey | modeLongKey,
	outcomeRich | modeRateDenied,
	outcomeRich | modeRateFails,
	outcomeRich | modeChunked,
	outcomeZero | modeChunked | modeOversized,
}

// TestOpenAPIOperationsAnswerAsDocumented sends a well-formed request to every documented
// operation under each conformance mode and checks the answer against the document: the status
// is one the operation lists, a JSON body matches the documented schema (with realistic service
// values), documented headers are present, and an undocumented body is absent.
func TestOpenAPIOperationsAnswerAsDocumented(t *testing.T) {
	t.Parallel()
	d := mustOpenAPI(t)
	for _, o := range d.ops() {
		t.Run(o.key(), func(t *testing.T) {
			t.Parallel()
			seen := map[int]bool{}
			for _, mode := range conformanceModes {
				var body []byte
				if br, ok := bodyRouteFor(o.key()); ok {
					body = []byte(br.good[0])
				}
				if mode&modeOversized != 0 && len(body) == 0 {
					continue // serveFuzz pads only bodies there are
				}
				rec := serveFuzz(t, mode, o.Method, concretePath(o.Path, defaultPathValues), "", body, nil)
				checkFuzzResponse(t, fmt.Sprintf("%s mode %#x", o.key(), uint16(mode)), rec, mode, o.key())
				seen[rec.Code] = true
				if mode.outcome().rich && rec.Code < 300 {
					checkAgainstDocument(t, d, o, mode, rec)
				}
			}
			t.Logf("statuses seen: %v", slices.Sorted(maps.Keys(seen)))
		})
	}
}

func checkAgainstDocument(t *testing.T, d *apiDoc, o apiOp, mode fuzzMode, rec *httptest.ResponseRecorder) {
	t.Helper()
	at := fmt.Sprintf("%s mode %#x status %d", o.key(), uint16(mode), rec.Code)
	res := d.response(o, rec.Code)
	if res == nil {
		return // checkFuzzResponse reported it
	}
	content := obj(res["content"])
	if len(content) == 0 {
		if rec.Body.Len() != 0 {
			t.Errorf("%s: the document promises no body, got %q", at, rec.Body)
		}
	} else {
		ct, _, _ := strings.Cut(rec.Header().Get("Content-Type"), ";")
		media, ok := content[ct]
		if !ok {
			t.Errorf("%s: Content-Type %q is not one of the documented %v", at, ct, slices.Sorted(maps.Keys(content)))
		} else if ct == "application/json" {
			var v any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Errorf("%s: body is not JSON: %v", at, err)
			} else {
				for _, msg := range validateJSON(d, obj(media)["schema"], v, "$") {
					t.Errorf("%s: %s; body %s", at, msg, rec.Body)
				}
			}
		}
	}
	headers := obj(res["headers"])
	limited := mode&(modeRateDenied|modeRateFails) == 0
	for name := range headers {
		got := rec.Header().Get(name)
		switch {
		case name == "Idempotent-Replayed":
			if want := mode&modeIdemKey != 0 && mode.idem() == idemReplayed; (got == "true") != want {
				t.Errorf("%s: Idempotent-Replayed = %q, want it set: %v", at, got, want)
			}
		case strings.HasPrefix(name, "X-RateLimit-"):
			if limited && got == "" {
				t.Errorf("%s: header %s is documented but missing", at, name)
			}
		}
	}
	if rec.Header().Get("X-RateLimit-Limit") != "" && headers["X-RateLimit-Limit"] == nil {
		t.Errorf("%s: X-RateLimit-Limit is sent but not documented for this response", at)
	}
}

// validateJSON checks v against a schema of the document: type, const, enum, required, properties,
// additionalProperties, items, allOf, minProperties and the date-time format; enough for the
// schemas this document uses.
func validateJSON(d *apiDoc, schema, v any, at string) []string {
	s := d.mustResolve(schema)
	var errs []string
	for _, part := range anyList(s["allOf"]) {
		errs = append(errs, validateJSON(d, part, v, at)...)
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(normalizeYAML(c), v) {
		errs = append(errs, fmt.Sprintf("%s = %v, want %v", at, v, c))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(normalizeYAML(e), v) }) {
		errs = append(errs, fmt.Sprintf("%s = %v, want one of %v", at, v, enum))
	}
	var types []string
	switch ty := s["type"].(type) {
	case string:
		types = []string{ty}
	case []any:
		for _, x := range ty {
			types = append(types, x.(string))
		}
	}
	if len(types) > 0 && !slices.ContainsFunc(types, func(ty string) bool { return jsonHasType(v, ty) }) {
		return append(errs, fmt.Sprintf("%s = %v (%T), want type %v", at, v, v, types))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range anyList(s["required"]) {
			if _, ok := x[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s.%s is required but missing", at, r))
			}
		}
		props := obj(s["properties"])
		for k, val := range x {
			if sub, ok := props[k]; ok {
				errs = append(errs, validateJSON(d, sub, val, at+"."+k)...)
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				errs = append(errs, validateJSON(d, ap, val, at+"."+k)...)
			}
		}
		if n, ok := s["minProperties"].(int); ok && len(x) < n {
			errs = append(errs, fmt.Sprintf("%s has %d properties, want at least %d", at, len(x), n))
		}
	case []any:
		if items, ok := s["items"]; ok {
			for i, it := range x {
				errs = append(errs, validateJSON(d, items, it, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case string:
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
				errs = append(errs, fmt.Sprintf("%s = %q is not a date-time", at, x))
			}
		}
	}
	return errs
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// normalizeYAML makes a YAML scalar comparable with its encoding/json counterpart.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}

func jsonHasType(v any, ty string) bool {
	switch ty {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	}
	return false
}

// allMocks are a mock for every port the handlers use.
type allMocks struct {
	users         *mocks.MockUserService
	profiles      *mocks.MockProfileService
	blocks        *mocks.MockBlockService
	articles      *mocks.MockArticleService
	schedule      *mocks.MockArticleScheduler
	comments      *mocks.MockCommentService
	collections   *mocks.MockCollectionService
	history       *mocks.MockHistoryService
	hot           *mocks.MockHotService
	notifications *mocks.MockNotificationService
	codeLogin     *mocks.MockCodeLoginService
	account       *mocks.MockAccountService
	sessions      *mocks.MockSessionService
	search        *mocks.MockSearchService
	limiter       *mocks.MockRateLimiter
	peopleSearch  *mocks.MockPeopleSearchService
	tagSearch     *mocks.MockTagSearchService
	reports       *mocks.MockReportService
	moderation    *mocks.MockModerationService
	uploads       *mocks.MockUploadService
	media         *mocks.MockMediaFiles
	sitemaps      *mocks.MockSitemapService
	signIn        *mocks.MockSignInService
	feeds         *mocks.MockFeedService
	revisions     *mocks.MockRevisionService
	webhooks      *mocks.MockWebhookService
	streams       *mocks.MockNotificationStreamService
}

func newAllMocks(ctrl *gomock.Controller) allMocks {
	return allMocks{
		users:         mocks.NewMockUserService(ctrl),
		profiles:      mocks.NewMockProfileService(ctrl),
		blocks:        mocks.NewMockBlockService(ctrl),
		articles:      mocks.NewMockArticleService(ctrl),
		schedule:      mocks.NewMockArticleScheduler(ctrl),
		comments:      mocks.NewMockCommentService(ctrl),
		collections:   mocks.NewMockCollectionService(ctrl),
		history:       mocks.NewMockHistoryService(ctrl),
		hot:           mocks.NewMockHotService(ctrl),
		notifications: mocks.NewMockNotificationService(ctrl),
		codeLogin:     mocks.NewMockCodeLoginService(ctrl),
		account:       mocks.NewMockAccountService(ctrl),
		sessions:      mocks.NewMockSessionService(ctrl),
		search:        mocks.NewMockSearchService(ctrl),
		limiter:       mocks.NewMockRateLimiter(ctrl),
		peopleSearch:  mocks.NewMockPeopleSearchService(ctrl),
		tagSearch:     mocks.NewMockTagSearchService(ctrl),
		reports:       mocks.NewMockReportService(ctrl),
		moderation:    mocks.NewMockModerationService(ctrl),
		uploads:       mocks.NewMockUploadService(ctrl),
		media:         mocks.NewMockMediaFiles(ctrl),
		sitemaps:      mocks.NewMockSitemapService(ctrl),
		signIn:        mocks.NewMockSignInService(ctrl),
		feeds:         mocks.NewMockFeedService(ctrl),
		revisions:     mocks.NewMockRevisionService(ctrl),
		webhooks:      mocks.NewMockWebhookService(ctrl),
		streams:       mocks.NewMockNotificationStreamService(ctrl),
	}
}

// handlers fills every field of web.Handlers.
func (m allMocks) handlers(logger *slog.Logger) web.Handlers {
	return web.Handlers{
		Auth:               web.NewAuthenticator(m.users, logger),
		Users:              web.NewUserHandler(m.users, logger),
		Profiles:           web.NewProfileHandler(m.profiles, logger),
		Blocks:             web.NewBlockHandler(m.blocks, logger),
		Articles:           web.NewArticleHandler(m.articles, nil, logger),
		Revisions:          web.NewRevisionHandler(m.revisions, logger),
		Schedule:           web.NewArticleScheduleHandler(m.schedule, logger),
		Comments:           web.NewCommentHandler(m.comments, logger),
		Collections:        web.NewCollectionHandler(m.collections, m.history, logger),
		Hot:                web.NewHotHandler(m.hot, logger),
		Notifications:      web.NewNotificationHandler(m.notifications, logger),
		NotificationStream: web.NewNotificationStreamHandler(m.streams, logger),
		CodeLogin:          web.NewCodeLoginHandler(m.codeLogin, logger),
		Account:            web.NewAccountHandler(m.account, logger),
		Sessions:           web.NewSessionHandler(m.sessions, m.users, logger),
		Search:             web.NewSearchHandler(m.search, logger),
		SearchPeople:       web.NewPeopleSearchHandler(m.peopleSearch, logger),
		SearchTags:         web.NewTagSearchHandler(m.tagSearch, logger),
		Reports:            web.NewReportHandler(m.reports, logger),
		Moderation:         web.NewModerationHandler(m.moderation, logger),
		Uploads:            web.NewUploadHandler(m.uploads, logger),
		Media:              web.NewMediaHandler(m.media, logger),
		Sitemaps:           web.NewSitemapHandler(m.sitemaps, nil, logger),
		SignIn:             web.NewSignInHandler(m.signIn, web.SignInCookieConfig{Secure: true}, logger),
		Feeds:              web.NewFeedHandler(m.feeds, nil, logger),
		Webhooks:           web.NewWebhookHandler(m.webhooks, logger),
		Idempotency:        web.NewIdempotency(),
		Limiter:            m.limiter,
		Observer:           nopObserver{},
		Readiness:          readyChecker{},
		Drain:              web.NewDrain(),
		Writes:             &writeLog{},
	}
}

type nopObserver struct{}

func (nopObserver) ObserveRequest(string, string, int, time.Duration) {}

// readyChecker reports every dependency ready.
type readyChecker struct{}

func (readyChecker) Ready(context.Context) map[string]error {
	return map[string]error{"postgres": nil, "redis": nil}
}
