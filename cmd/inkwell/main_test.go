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

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"frobnicate"}, &out, &errOut); err == nil {
		t.Fatal("unknown command accepted")
	}
	if !strings.Contains(errOut.String(), "inkwell migrate up") {
		t.Errorf("usage not printed: %s", errOut.String())
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

func TestMigrateCommands(t *testing.T) {
	db := testenv.NewEmptyDB(t)
	var out, errOut bytes.Buffer
	args := func(sub string) []string {
		return []string{"migrate", sub, "-database-url", db.URL, "-log-format", "text"}
	}
	if err := run(context.Background(), args("status"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pending") {
		t.Fatalf("status before up: %s", out.String())
	}
	if err := run(context.Background(), args("up"), &out, &errOut); err != nil {
		t.Fatalf("migrate up: %v\n%s", err, errOut.String())
	}
	out.Reset()
	if err := run(context.Background(), args("status"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "pending") || !strings.Contains(out.String(), "applied") {
		t.Fatalf("status after up: %s", out.String())
	}
	if err := run(context.Background(), []string{"migrate", "sideways", "-database-url", db.URL}, &out, &errOut); err == nil {
		t.Fatal("unknown migrate subcommand accepted")
	}
}
