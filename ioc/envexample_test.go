package ioc

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEnvExampleListsEverySetting: .env.example, which documents what a deployment may set,
// names every setting's environment variable. A new setting fails here until it is added there.
func TestEnvExampleListsEverySetting(t *testing.T) {
	text, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	example := string(text)
	envName := regexp.MustCompile(`\(env ([A-Z0-9_]+)\)$`)
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	Flags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		m := envName.FindStringSubmatch(f.Usage)
		if m == nil {
			t.Errorf("flag %s names no environment variable", f.Name)
			return
		}
		if !regexp.MustCompile(`(?m)^(# )?` + m[1] + `=`).MatchString(example) {
			t.Errorf(".env.example lacks %s (flag -%s)", m[1], f.Name)
		}
	})
	if !strings.Contains(example, "\nINKWELL_JWT_SECRET=\n") {
		t.Error(".env.example must leave INKWELL_JWT_SECRET to fill in")
	}
}
