package inkwell

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyRule enforces the hexagonal dependency rule: domain and service (the core) must
// not depend, directly or transitively, on storage, transport or adapter packages.
func TestDependencyRule(t *testing.T) {
	t.Parallel()
	forbidden := []string{
		"github.com/jackc/pgx",
		"github.com/redis/go-redis",
		"github.com/gin-gonic/gin",
		"github.com/inkwell-dev/inkwell/dao",
		"github.com/inkwell-dev/inkwell/cache",
		"github.com/inkwell-dev/inkwell/web",
		"github.com/inkwell-dev/inkwell/repository",
		"github.com/inkwell-dev/inkwell/auth",
		"github.com/inkwell-dev/inkwell/ioc",
	}
	for _, pkg := range []string{"github.com/inkwell-dev/inkwell/domain", "github.com/inkwell-dev/inkwell/service"} {
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

// TestDomainImportsStandardLibraryOnly keeps domain free of any third-party module.
func TestDomainImportsStandardLibraryOnly(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/inkwell-dev/inkwell/domain").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/inkwell-dev/inkwell/domain" {
			t.Errorf("domain depends on non-standard package %s", dep)
		}
	}
}

// TestInfrastructureImportsNoLayer keeps ioc/ to infrastructure built from libraries: it may use
// the module's internal helpers, never one of inkwell's layers (the root package wires those).
func TestInfrastructureImportsNoLayer(t *testing.T) {
	t.Parallel()
	const module = "github.com/inkwell-dev/inkwell"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/ioc").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if (dep == module || strings.HasPrefix(dep, module+"/")) && dep != module+"/ioc" && !strings.HasPrefix(dep, module+"/internal/") {
			t.Errorf("ioc depends on %s; it may import only libraries and %s/internal/...", dep, module)
		}
	}
}
