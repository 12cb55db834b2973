package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestUsersCommand: `inkwell users recheck` recomputes an old-rule canonical email, and
// `inkwell users collisions` then lists the accounts the old rule made one address, says which
// wait for the recheck, and changes nothing; a wrong command line exits 2.
func TestUsersCommand(t *testing.T) {
	db := testenv.NewDB(t)
	t.Setenv("DATABASE_URL", db.URL)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO users (email, email_canonical, username, password_hash) VALUES
		('v@straße.de', 'v@strasse.de', 'vera_idn', 'x'), ('οδυσσευς@example.gr', 'οδυσσευσ@example.gr', 'odysseus', 'x')`); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"users"}, args...), &out, &errOut)
		return out.String(), err
	}
	out, err := cli("collisions")
	if err != nil || !strings.Contains(out, "2 accounts still wait for the email recheck") {
		t.Fatalf("collisions before the recheck: %v\n%s", err, out)
	}
	if out, err := cli("recheck"); err != nil || !strings.Contains(out, "2 canonical emails recomputed") {
		t.Fatalf("recheck: %v\n%s", err, out)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO users (email, email_canonical, username, password_hash, email_canonical_checked) VALUES
		('v@strasse.de', 'v@strasse.de', 'vera_ascii', 'x', true), ('οδυσσευσ@example.gr', 'οδυσσευσ@example.gr', 'odysseus2', 'x', true)`); err != nil {
		t.Fatalf("the twins the mailbox rule allows: %v", err)
	}
	var before string
	snapshot := `SELECT string_agg(id || email || email_canonical || email_canonical_checked, ',' ORDER BY id) FROM users`
	if err := db.Pool.QueryRow(ctx, snapshot).Scan(&before); err != nil {
		t.Fatal(err)
	}
	out, err = cli("collisions")
	if err != nil || strings.Count(out, `old rule  "`) != 4 || !strings.Contains(out, "vera_ascii") || !strings.Contains(out, `"v@straße.de"`) ||
		!strings.Contains(out, "odysseus2") || !strings.Contains(out, "2 groups") || strings.Contains(out, "wait for") {
		t.Fatalf("collisions: %v\n%s", err, out)
	}
	var after string
	if err := db.Pool.QueryRow(ctx, snapshot).Scan(&after); err != nil || after != before {
		t.Fatalf("users collisions changed accounts (%v)", err)
	}
	var usage usageError
	if _, err := cli("merge"); !errors.As(err, &usage) {
		t.Fatalf("an unknown subcommand: %v, want a usage error", err)
	}
	if _, err := cli("collisions", "extra"); !errors.As(err, &usage) {
		t.Fatalf("an extra argument: %v, want a usage error", err)
	}
	if out, err := cli("--help"); err == nil || !strings.Contains(out, "collisions") {
		t.Fatalf("--help: %v\n%s", err, out)
	}
}
