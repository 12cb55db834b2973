package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/migrations"
)

// TestMain points the dev secret file into a temporary directory: commands run here in dev without
// INKWELL_JWT_SECRET would otherwise create cmd/inkwell/.data/jwt-secret in the repository.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "inkwell-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("INKWELL_DEV_SECRET_FILE", filepath.Join(dir, "jwt-secret"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestHelpListsEverySetting(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve", "--help"}, &out, &errOut)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, env := range []string{"DATABASE_URL", "REDIS_URL", "INKWELL_ADDR", "INKWELL_JWT_SECRET", "INKWELL_DEV_SECRET_FILE", "INKWELL_ENV", "INKWELL_MIGRATE_ON_START"} {
		if !strings.Contains(out.String(), env) {
			t.Errorf("--help does not mention %s:\n%s", env, out.String())
		}
	}
}

// TestUsageErrors: a mistyped command, subcommand, flag or argument prints one line on stderr
// naming it and pointing at --help, and exits 2.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the one line
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"; see 'inkwell --help'`},
		{[]string{"migrate", "up", "--databse-url", "x"}, "flag provided but not defined: -databse-url; see 'inkwell migrate up --help'"},
		{[]string{"--addrr", ":1"}, "-addrr; see 'inkwell serve --help'"},
		{[]string{"migrate"}, "needs a subcommand: up, down, to, status"},
		{[]string{"migrate", "sideways"}, `unknown subcommand "sideways"`},
		{[]string{"migrate", "to"}, "needs VERSION"},
		{[]string{"migrate", "to", "x"}, `VERSION "x"`},
		{[]string{"migrate", "up", "extra"}, `unexpected argument "extra"`},
		{[]string{"jobs", "list", "--status", "bogus"}, `--status "bogus": want ready, running, done or dead`},
		{[]string{"jobs", "list", "--limit", "x"}, `invalid value "x" for flag -limit`},
		{[]string{"jobs", "retry", "x"}, `job id "x"`},
		{[]string{"outbox", "list", "--status", "bogus"}, "want pending, published, applied or dead"},
		{[]string{"seed", "--users", "0"}, "--users and --days ≥ 1"},
		{[]string{"prune", "--log-level", "loud"}, `log level "loud"`},
		{[]string{"search"}, "needs a subcommand: reindex"},
		{[]string{"help", "me"}, `unknown help topic "me"`},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, &out, &errOut)
		if code := exitCode(err, &errOut); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", tc.args, code, err)
			continue
		}
		line := errOut.String()
		if strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "inkwell: ") || !strings.Contains(line, tc.want) {
			t.Errorf("%v: stderr %q, want one line with %q", tc.args, line, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: wrote to stdout: %s", tc.args, out.String())
		}
	}
}

// TestHelpAndVersion: --help and --version exit 0 with their text on stdout; a command's --help
// lists its own flags and the settings it reads, not all of them.
func TestHelpAndVersion(t *testing.T) {
	cli := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, &out, &errOut)
		if code := exitCode(err, &errOut); code != 0 || errOut.Len() != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
		return out.String()
	}
	if out := cli("--help"); !strings.Contains(out, "inkwell migrate to VERSION") || !strings.Contains(out, "inkwell --version") {
		t.Errorf("--help:\n%s", out)
	}
	if out := cli("--version"); !strings.HasPrefix(out, "inkwell ") || !strings.Contains(out, "go:") {
		t.Errorf("--version: %s", out)
	}
	if out := cli("version"); !strings.HasPrefix(out, "inkwell ") {
		t.Errorf("version: %s", out)
	}
	if out := cli("migrate", "--help"); !strings.Contains(out, "to VERSION") || !strings.Contains(out, "down") {
		t.Errorf("migrate --help:\n%s", out)
	}
	settings := cli("help", "settings")
	for _, tc := range []struct {
		args       []string
		want, omit []string
	}{
		{[]string{"migrate", "up", "--help"}, []string{"-database-url", "DATABASE_URL", "INKWELL_LOG_LEVEL", "help settings"}, []string{"INKWELL_REDIS_PREFIX", "REDIS_URL"}},
		{[]string{"jobs", "list", "-h"}, []string{"-status", "ready, running, done or dead", "-limit", "-queue", "DATABASE_URL"}, []string{"INKWELL_REDIS_PREFIX"}},
		{[]string{"jobs", "retry", "--help"}, []string{"Usage: inkwell jobs retry [flags] ID"}, []string{"-status"}},
		{[]string{"seed", "--help"}, []string{"-articles", "-reader", "INKWELL_ARGON2_MEMORY_KIB"}, []string{"INKWELL_RANK_TOP_N"}},
		{[]string{"rank", "--help"}, []string{"INKWELL_RANK_TOP_N", "REDIS_URL"}, []string{"INKWELL_RETENTION_HISTORY"}},
		{[]string{"search", "reindex", "--help"}, []string{"INKWELL_SEARCH_LANGUAGE"}, []string{"INKWELL_RANK_TOP_N"}},
		{[]string{"outbox", "list", "--help"}, []string{"-status", "-limit"}, []string{"INKWELL_REDIS_PREFIX"}},
	} {
		out := cli(tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: %q missing:\n%s", tc.args, w, out)
			}
		}
		for _, o := range tc.omit {
			if strings.Contains(out, o) {
				t.Errorf("%v: lists %s:\n%s", tc.args, o, out)
			}
		}
		if n, all := strings.Count(out, "\n"), strings.Count(settings, "\n"); n*2 > all {
			t.Errorf("%v: %d lines of help, all settings are %d", tc.args, n, all)
		}
	}
	// Subcommands log text at warn unless told otherwise.
	if out := cli("prune", "--help"); !strings.Contains(out, `(default "warn")`) || !strings.Contains(out, `(default "text")`) {
		t.Errorf("prune's log defaults:\n%s", out)
	}
	if out := cli("serve", "--help"); !strings.Contains(out, `(default "info")`) || !strings.Contains(out, `(default "json")`) {
		t.Errorf("serve's log defaults:\n%s", out)
	}
	t.Setenv("INKWELL_LOG_LEVEL", "debug")
	if out := cli("prune", "--help"); !strings.Contains(out, `(default "debug")`) {
		t.Errorf("INKWELL_LOG_LEVEL ignored by prune:\n%s", out)
	}
}

func TestExitCodes(t *testing.T) {
	var errOut bytes.Buffer
	for err, want := range map[error]int{nil: 0, flag.ErrHelp: 0, errors.New("boom"): 1, usageError{"bad"}: 2, fmt.Errorf("wrapped: %w", usageError{"bad"}): 2} {
		if got := exitCode(err, &errOut); got != want {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, want)
		}
	}
}

func TestServeRefusesProdWithoutSecret(t *testing.T) {
	t.Setenv("INKWELL_ENV", "prod")
	t.Setenv("INKWELL_JWT_SECRET", "")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "INKWELL_JWT_SECRET") {
		t.Fatalf("prod without secret: %v", err)
	}
}

// TestMigrateCommands: status, up, down (one step) and to VERSION (down and up), each printing
// what it did on stdout and nothing on stderr (no log lines mixed in).
func TestMigrateCommands(t *testing.T) {
	db := testenv.NewEmptyDB(t)
	t.Setenv("DATABASE_URL", db.URL)
	latest := migrations.LatestVersion()
	cli := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(context.Background(), append([]string{"migrate"}, args...), &out, &errOut); err != nil {
			t.Fatalf("migrate %v: %v\n%s", args, err, errOut.String())
		}
		if errOut.Len() != 0 {
			t.Errorf("migrate %v wrote to stderr: %s", args, errOut.String())
		}
		return out.String()
	}
	if out := cli("status"); !strings.Contains(out, "pending") {
		t.Fatalf("status before up: %s", out)
	}
	if out := cli("up"); !strings.Contains(out, "applied 00001_users.sql") || !strings.Contains(out, fmt.Sprintf("at version %d", latest)) {
		t.Fatalf("up: %s", out)
	}
	if out := cli("status"); strings.Contains(out, "pending") || !strings.Contains(out, "applied") {
		t.Fatalf("status after up: %s", out)
	}
	out := cli("down")
	if strings.Count(out, "rolled back") != 1 || !strings.Contains(out, fmt.Sprintf("rolled back %05d_", latest)) {
		t.Fatalf("down: %s", out)
	}
	if out := cli("to", "12"); !strings.Contains(out, "rolled back 00013_") || !strings.Contains(out, "at version 12") {
		t.Fatalf("to 12: %s", out)
	}
	if out := cli("to", "13"); strings.Count(out, "applied") != 1 || !strings.Contains(out, "at version 13") {
		t.Fatalf("to 13: %s", out)
	}
	if out := cli("to", "13"); !strings.Contains(out, "0 changed") {
		t.Fatalf("to 13 again: %s", out)
	}
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"migrate", "to", "9"}, &bytes.Buffer{}, &errOut)
	if code := exitCode(err, &errOut); code != 2 || !strings.Contains(errOut.String(), "no migration has version 9") {
		t.Fatalf("to an unknown version: exit %d, %s", code, errOut.String())
	}
	if out := cli("up"); !strings.Contains(out, fmt.Sprintf("at version %d", latest)) {
		t.Fatalf("up again: %s", out)
	}
}
