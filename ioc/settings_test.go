package ioc

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// maxSettings is what `inkwell serve --help` may list at most (issue 27): a tuning knob is a
// constant next to the code it tunes, not a setting.
const maxSettings = 50

// TestSettingsAreDeclaredOnce: every setting has help text and a group, and no two share a flag
// or a variable, nor a removed setting's.
func TestSettingsAreDeclaredOnce(t *testing.T) {
	list := Settings()
	if len(list) > maxSettings {
		t.Errorf("%d settings, at most %d: make a tuning knob a constant", len(list), maxSettings)
	}
	names, envs := map[string]bool{}, map[string]bool{}
	for _, r := range RemovedSettings {
		names[r.Name], envs[r.Env()] = true, true
		if r.Now == "" {
			t.Errorf("removed setting %s says nothing about what replaced it", r.Name)
		}
	}
	for _, s := range list {
		if strings.TrimSpace(s.Help) == "" {
			t.Errorf("setting %s has no help text", s.Name)
		}
		if !slices.Contains(Groups, s.Group) {
			t.Errorf("setting %s is in no group of Groups (%q)", s.Name, s.Group)
		}
		if names[s.Name] || envs[s.Env] {
			t.Errorf("setting %s (%s) is declared twice, or was removed", s.Name, s.Env)
		}
		names[s.Name], envs[s.Env] = true, true
	}
	// Declared group by group, in the order of Groups: help and the README list them so.
	var order []string
	for _, s := range list {
		if len(order) == 0 || order[len(order)-1] != s.Group {
			order = append(order, s.Group)
		}
	}
	if !slices.Equal(order, Groups) {
		t.Errorf("groups declared in the order %v, want %v, each once", order, Groups)
	}
}

// TestReadmeHasARowPerSetting: the README's settings table has one row per setting, in the
// order of the declarations (so grouped as --help groups them), and none for a setting that does
// not exist.
func TestReadmeHasARowPerSetting(t *testing.T) {
	text, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]+)` \\|")
	var rows []string
	for _, m := range row.FindAllStringSubmatch(string(text), -1) {
		rows = append(rows, m[1])
	}
	var want []string
	for _, s := range Settings() {
		want = append(want, s.Env)
	}
	for _, env := range want {
		if n := slices.Index(rows, env); n < 0 {
			t.Errorf("README's settings table has no row of %s", env)
		}
	}
	if !slices.Equal(rows, want) {
		t.Errorf("README's settings table lists\n%v\nwant one row per setting, in the order of --help:\n%v", rows, want)
	}
}

// TestEnvExampleListsEverySetting: .env.example, which documents what a deployment may set,
// names every setting's environment variable, and no removed one. A new setting fails here until
// it is added there.
func TestEnvExampleListsEverySetting(t *testing.T) {
	text, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	example := string(text)
	listed := func(env string) bool { return regexp.MustCompile(`(?m)^(# )?` + env + `=`).MatchString(example) }
	for _, s := range Settings() {
		if !listed(s.Env) {
			t.Errorf(".env.example lacks %s (flag -%s)", s.Env, s.Name)
		}
	}
	for _, r := range RemovedSettings {
		if listed(r.Env()) {
			t.Errorf(".env.example still lists %s, which was removed", r.Env())
		}
	}
	if !strings.Contains(example, "\nINKWELL_JWT_SECRET=\n") {
		t.Error(".env.example must leave INKWELL_JWT_SECRET to fill in")
	}
}

// TestRemovedSettingIsReported: a removed setting in the environment is warned about once,
// naming it and what replaced it, and the process still starts; on the command line it fails
// the parse with the same explanation.
func TestRemovedSettingIsReported(t *testing.T) {
	t.Setenv("INKWELL_CACHE_TTL", "5m")
	t.Setenv("INKWELL_QUEUE_POLL", "1s")
	cfg := parse(t, nil)
	if err := cfg.Validate(discard); err != nil {
		t.Fatalf("a removed setting in the environment stopped the start: %v", err)
	}
	var logs bytes.Buffer
	cfg.WarnRemoved(slog.New(slog.NewTextHandler(&logs, nil)))
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d warnings, want one per removed setting set:\n%s", len(lines), logs.String())
	}
	for i, want := range [][]string{{"env=INKWELL_CACHE_TTL", "cache.TTL", "10m"}, {"env=INKWELL_QUEUE_POLL", "job.QueuePoll"}} {
		for _, w := range append(want, "level=WARN") {
			if !strings.Contains(lines[i], w) {
				t.Errorf("warning %q lacks %q", lines[i], w)
			}
		}
	}

	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Flags(fs)
	err := fs.Parse([]string{"-cache-ttl", "5m"})
	if err == nil || !strings.Contains(err.Error(), "-cache-ttl was removed") || !strings.Contains(err.Error(), "cache.TTL") {
		t.Fatalf("a removed flag: %v, want an error saying what replaced it", err)
	}
}

// TestNoWarningWithoutRemovedSettings: a clean environment logs nothing.
func TestNoWarningWithoutRemovedSettings(t *testing.T) {
	for _, r := range RemovedSettings {
		if _, ok := os.LookupEnv(r.Env()); ok {
			t.Setenv(r.Env(), "")
			os.Unsetenv(r.Env()) // t.Setenv restores it
		}
	}
	var logs bytes.Buffer
	parse(t, nil).WarnRemoved(slog.New(slog.NewTextHandler(&logs, nil)))
	if logs.Len() != 0 {
		t.Fatalf("warnings without removed settings: %s", logs.String())
	}
}

// TestChangelogListsRemovedSettings: an operator upgrading reads which variables no longer do
// anything in the CHANGELOG.
func TestChangelogListsRemovedSettings(t *testing.T) {
	text, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range RemovedSettings {
		if !strings.Contains(string(text), "`"+r.Env()+"`") {
			t.Errorf("CHANGELOG.md does not list the removed setting %s", r.Env())
		}
	}
}
