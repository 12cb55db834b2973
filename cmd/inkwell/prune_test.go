package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func TestPruneHelpListsItsFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"prune", "--help"}, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, f := range []string{"-dry-run", "-count-limit", "INKWELL_RETENTION_NOTIFICATIONS", "INKWELL_RETENTION_HISTORY"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("prune --help does not mention %s", f)
		}
	}
}

// TestPruneCommand: --dry-run prints what a pass would delete per table (capped, and says so)
// and deletes nothing; without it the pass deletes and prints what it deleted.
func TestPruneCommand(t *testing.T) {
	db := testenv.NewDB(t)
	if _, err := db.Pool.Exec(t.Context(), `INSERT INTO inbox (consumer, event_id, received_at)
		SELECT 'c', 'old' || g, now() - interval '2 days' FROM generate_series(1, 3) g
		UNION ALL SELECT 'c', 'live', now()`); err != nil {
		t.Fatal(err)
	}
	prune := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append([]string{"prune", "-database-url", db.URL, "-log-format", "text", "-log-level", "warn"}, args...)
		if err := run(context.Background(), args, &out, &errOut); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	inboxRows := func() int {
		var n int
		if err := db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM inbox`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	row := func(out, table string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + table + `\s.*$`).FindString(out)
		if m == "" {
			t.Fatalf("no %s row in:\n%s", table, out)
		}
		return strings.Join(strings.Fields(m), " ")
	}

	out := prune("--dry-run")
	if got := row(out, "inbox"); got != "inbox received over 1d ago 3" {
		t.Errorf("dry run inbox row %q:\n%s", got, out)
	}
	if !strings.Contains(out, "WOULD DELETE") || !strings.Contains(out, "nothing deleted") || inboxRows() != 4 {
		t.Fatalf("dry run deleted (%d rows left) or said otherwise:\n%s", inboxRows(), out)
	}
	out = prune("--dry-run", "--count-limit", "2")
	if got := row(out, "inbox"); got != "inbox received over 1d ago ≥2 (capped)" {
		t.Errorf("capped dry run inbox row %q:\n%s", got, out)
	}

	t.Setenv("INKWELL_RETENTION_NOTIFICATIONS", "off")
	out = prune()
	if got := row(out, "inbox"); got != "inbox received over 1d ago 3 1" {
		t.Errorf("inbox row %q:\n%s", got, out)
	}
	if got := row(out, "notifications"); got != "notifications off - -" {
		t.Errorf("notifications row %q:\n%s", got, out)
	}
	if !strings.Contains(out, "pruned 3 rows") || inboxRows() != 1 {
		t.Fatalf("prune left %d inbox rows:\n%s", inboxRows(), out)
	}
}
