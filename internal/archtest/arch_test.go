// Package archtest checks the module's import graph: which of its packages may import which
// (an allow-list), and the hexagonal rule that the core (domain, service) depends on no storage,
// transport or adapter package. It holds tests only.
package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/inkwell-dev/inkwell"

// allowed lists, for every package of the module (by its path inside the module; "." is the
// root), the other module packages it may import directly:
//
//   - imports: what its non-test files may import;
//   - tests: what its _test.go files (in-package and external) may import besides those and the
//     package itself.
//
// A package missing from this table fails the test, and so does an import arrow it does not
// allow: a new package or a new dependency between packages is a decision to write down here,
// one line per package. Imports of the standard library and third-party modules are not listed
// (TestCore... below restrict those for the core). An allowed arrow that no longer exists is only
// logged (go test -v): drop it when you notice.
var allowed = map[string]struct{ imports, tests string }{
	".":                     {imports: "auth cache delivery domain events ioc job media metrics migrations oidc render repository repository/durable repository/identities repository/mediastore repository/moderation repository/pg repository/revisions repository/search repository/session repository/uploads repository/webhooks service web webhookdial", tests: "service/mocks"},
	"auth":                  {imports: "domain"},
	"bench/loadgen":         {},
	"cmd/inkwell/seed":      {imports: "dao repository/pg repository/search", tests: "internal/testenv repository/pg"}, // the seeder: bulk COPY for `inkwell seed`, benchmarks and plan tests; folds its words through the search room's lexicon
	"cache":                 {imports: "domain", tests: "internal/testenv"},
	"cmd/inkwell":           {imports: ". auth cmd/inkwell/seed domain ioc migrations repository repository/durable repository/pg repository/search", tests: "internal/apptest internal/testenv"},
	"dao":                   {},
	"delivery":              {imports: "domain", tests: "internal/testenv"}, // tests mail through a loopback SMTP server
	"domain":                {},
	"e2e":                   {tests: ". auth cache domain internal/apptest internal/testenv ioc job render repository repository/durable repository/mediastore repository/moderation repository/pg repository/search repository/session service web"},
	"events":                {imports: "domain", tests: "internal/testenv"},
	"internal/apptest":      {imports: ". internal/testenv ioc"},
	"internal/archtest":     {},
	"internal/tools/fakes3": {}, // a real S3 server (gofakes3 in memory) that testenv.StartS3 builds and runs as a process of its own
	"internal/tools/oidcop": {}, // a real OpenID provider (zitadel/oidc op in memory) that testenv.StartOIDCProvider builds and runs as a process of its own
	"internal/testenv":      {imports: "migrations"},
	"ioc":                   {imports: "requestid"}, // infrastructure only: the root package wires the layers
	"job":                   {imports: "domain events service", tests: "cache dao internal/testenv repository repository/durable repository/pg repository/search repository/webhooks webhookdial"},
	"media":                 {imports: "domain", tests: "service"}, // the image pipeline: sniff, header limits, decode, re-encode; implements service.ImageProcessor, no storage
	"metrics":               {},
	"migrations":            {tests: "internal/testenv"},
	"oidc":                  {imports: "domain service", tests: "internal/testenv"},                                                                                                                           // sign-in provider adapters (go-oidc relying party, GitHub OAuth 2); implements service.IdentityProvider(s); its tests sign in at a real OpenID provider (internal/tools/oidcop)
	"render":                {imports: "domain"},                                                                                                                                                              // Markdown to sanitized HTML (goldmark, bluemonday); implements service.MarkdownRenderer and cache.BodyRenderer, no storage
	"repository":            {imports: "cache dao domain repository/durable repository/pg repository/revisions repository/search service", tests: "cmd/inkwell/seed internal/testenv job repository/session"}, // repository/search: only search.Language, the configuration article writes index in; the plan tests load a seed
	"repository/durable":    {imports: "dao domain repository/pg service", tests: "internal/testenv repository"},                                                                                              // room of durable delivery; the core writes its rows (core → durable, one way); its tests prune the outbox with the core's retention store
	"repository/identities": {imports: "dao domain repository/pg service", tests: "internal/testenv"},                                                                                                         // room of sign-in providers (#30): linked identities, provider-made accounts, sign-in states and exchange codes (hashes, consumed by one DELETE)
	"repository/mediastore": {imports: "domain", tests: "internal/testenv"},                                                                                                                                   // the media room: the store of uploaded images (a local directory or S3 through minio-go); its tests run against a real S3 server (internal/tools/fakes3)
	"repository/moderation": {imports: "cache dao domain repository/pg service", tests: "internal/testenv repository"},                                                                                        // room of moderation: the log, notices, reports and cases, blocks; hiding and suspending change the core's rows, joined by the use case's unit of work
	"repository/pg":         {imports: "dao domain service", tests: "cache domain internal/testenv"},                                                                                                          // the unit of work and error translation every storage room shares; implements service.Tx
	"repository/revisions":  {imports: "dao domain repository/pg service", tests: "cache internal/testenv repository repository/search"},                                                                      // room of article revisions (#32); the core writes them in an edit's unit of work (core → revisions, one way); its tests edit through the core repository
	"repository/search":     {imports: "cache dao domain repository/pg service", tests: "internal/testenv repository"},                                                                                        // the search room; reads articles through its own ArticleReader port, never imports the core repository (its tests write articles through it)
	"repository/session":    {imports: "dao domain repository/pg service", tests: "internal/testenv"},                                                                                                         // room of sessions and API keys
	"repository/uploads":    {imports: "dao domain repository/pg service", tests: "internal/testenv"},                                                                                                         // room of uploads: their rows, each user's total, the orphaned object keys
	"repository/webhooks":   {imports: "dao domain repository/pg service", tests: "internal/testenv repository/durable"},                                                                                      // room of webhooks (#33): endpoints, deliveries numbered per endpoint; enqueues each endpoint's next delivery job through its Jobs port (the root binds durable's) in the same unit of work
	"requestid":             {},                                                                                                                                                                               // a leaf both web (sets the id) and ioc's logger (reads it) stand on; internal/ holds test support only
	"resilience":            {tests: "cache domain internal/apptest internal/testenv ioc"},
	"service":               {imports: "domain", tests: "cache internal/testenv repository repository/durable repository/pg service/mocks"}, // tests run use cases over the real unit of work
	"service/mocks":         {imports: "domain service"},
	"web":                   {imports: "domain requestid service", tests: "web/mocks"},
	"web/mocks":             {imports: "domain service"},
	"webhookdial":           {imports: "domain"}, // the webhook sender (#33): the SSRF rules on the connected address, no redirects, bounded answers
}

// pkg is one package of the module as go list sees it, import paths relative to the module.
type pkg struct {
	path        string
	imports     []string // non-test, module packages only
	testImports []string // in-package and external test files, module packages only
}

func listModule(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}",
		module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s/...: %v\n%s", module, err, out)
	}
	var pkgs []pkg
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) == 1 && strings.TrimSpace(f[0]) == "" {
			continue
		}
		if len(f) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		pkgs = append(pkgs, pkg{path: rel(f[0]), imports: moduleOnly(f[1]), testImports: moduleOnly(f[2])})
	}
	return pkgs
}

// rel is an import path inside the module ("." for the root), or "" for one outside it.
func rel(importPath string) string {
	if importPath == module {
		return "."
	}
	if p, ok := strings.CutPrefix(importPath, module+"/"); ok {
		return p
	}
	return ""
}

func moduleOnly(list string) []string {
	var out []string
	for _, p := range strings.Fields(list) {
		if r := rel(p); r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// TestImportAllowList fails on a package missing from allowed, on a listed package that no
// longer exists, and on any import between module packages that allowed does not list.
func TestImportAllowList(t *testing.T) {
	t.Parallel()
	pkgs := listModule(t)
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.path] = true
		rule, ok := allowed[p.path]
		if !ok {
			t.Errorf("package %s is not in internal/archtest's allow-list: add a line for it with the module packages it imports (%s) and its tests import (%s)",
				p.path, strings.Join(p.imports, " "), strings.Join(p.testImports, " "))
			continue
		}
		imports, tests := strings.Fields(rule.imports), strings.Fields(rule.tests)
		for _, imp := range p.imports {
			if !slices.Contains(imports, imp) {
				t.Errorf("%s imports %s, which internal/archtest's allow-list does not allow: remove the import, or (if the architecture allows it) add %s to the imports of %s",
					p.path, imp, imp, p.path)
			}
		}
		for _, imp := range p.testImports {
			if imp != p.path && !slices.Contains(imports, imp) && !slices.Contains(tests, imp) {
				t.Errorf("tests of %s import %s, which internal/archtest's allow-list does not allow: remove the import, or add %s to the tests of %s",
					p.path, imp, imp, p.path)
			}
		}
		for _, a := range imports {
			if !slices.Contains(p.imports, a) {
				t.Logf("%s no longer imports %s: its allowance can go", p.path, a)
			}
		}
		for _, a := range tests {
			if !slices.Contains(p.testImports, a) {
				t.Logf("tests of %s no longer import %s: the allowance can go", p.path, a)
			}
		}
	}
	for path := range allowed {
		if !seen[path] {
			t.Errorf("internal/archtest's allow-list has %s, which is no longer a package of the module: remove its line", path)
		}
	}
}

// TestCoreDependencyRule enforces the hexagonal dependency rule: domain and service (the core)
// must not depend, directly or transitively, on storage, transport or adapter packages.
func TestCoreDependencyRule(t *testing.T) {
	t.Parallel()
	forbidden := []string{
		"github.com/jackc/pgx",
		"github.com/redis/go-redis",
		"github.com/gin-gonic/gin",
		module + "/dao",
		module + "/cache",
		module + "/web",
		module + "/repository",
		module + "/auth",
		module + "/ioc",
	}
	for _, pkg := range []string{module + "/domain", module + "/service"} {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list %s: %v\n%s", pkg, err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, bad := range forbidden {
					if dep == bad || strings.HasPrefix(dep, bad+"/") {
						t.Errorf("%s depends on %s; the core may import only the standard library, domain and golang.org/x/sync", pkg, dep)
					}
				}
			}
		})
	}
}

// TestCoreDomainImportsStandardLibraryOnly keeps domain free of any third-party module.
func TestCoreDomainImportsStandardLibraryOnly(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/domain").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != module+"/domain" {
			t.Errorf("domain depends on non-standard package %s", dep)
		}
	}
}

// TestInternalHoldsTestSupportOnly keeps internal/ the test harness: production code imports
// nothing from it (only tests and the harness itself do), so the folder's arrows all come from
// tests and none runs back up from a production package.
func TestInternalHoldsTestSupportOnly(t *testing.T) {
	t.Parallel()
	for _, p := range listModule(t) {
		if strings.HasPrefix(p.path, "internal/") {
			continue
		}
		for _, imp := range p.imports {
			if strings.HasPrefix(imp, "internal/") {
				t.Errorf("%s (production code) imports %s: internal/ holds test support only; move what production needs out of it", p.path, imp)
			}
		}
	}
}

// TestRedisClientStaysInTheAdapters keeps go-redis out of the packages that consume stream
// entries through events (job) and out of the core: they see events.Message, not the client's
// types. Checked on the packages' own (non-test) imports; their tests may drive a real Redis.
func TestRedisClientStaysInTheAdapters(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"job", "service", "domain"} {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, imp := range strings.Fields(string(out)) {
			if strings.HasPrefix(imp, "github.com/redis/go-redis") {
				t.Errorf("%s imports %s; only the adapters (cache, events, ioc) may use the Redis client", pkg, imp)
			}
		}
	}
}
