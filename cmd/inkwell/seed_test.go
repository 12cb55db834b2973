package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestSeedSaysHowToSignIn: seed names the users it created and how to sign in as one, on
// stdout, with no log lines mixed in; the account it names exists with that email.
func TestSeedSaysHowToSignIn(t *testing.T) {
	db := testenv.NewDB(t)
	t.Setenv("DATABASE_URL", db.URL)
	seed := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(context.Background(), append([]string{"seed", "--articles", "3", "--users", "2", "--argon2-memory-kib", "19456"}, args...), &out, &errOut); err != nil {
			t.Fatalf("seed %v: %v\n%s", args, err, errOut.String())
		}
		if errOut.Len() != 0 {
			t.Errorf("seed wrote to stderr: %s", errOut.String())
		}
		return out.String()
	}
	out := seed()
	m := regexp.MustCompile(`Sign in as (\S+):\n  email:    (\S+)\n  password: password123\n`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "Created 2 users, "+m[1]+" … ") || m[2] != m[1]+"@example.com" || !strings.Contains(out, `"email":"`+m[2]+`"`) {
		t.Fatalf("seed output:\n%s", out)
	}
	var n int
	if err := db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM users WHERE email = $1 AND username = $2`, m[2], m[1]).Scan(&n); err != nil || n != 1 {
		t.Fatalf("user %s: %d rows, %v", m[2], n, err)
	}
	out = seed("--reader", "ann", "--reader-follows", "1")
	if !strings.Contains(out, "Created the reader ann, who follows 1 authors") || !strings.Contains(out, "email:    ann@example.com") {
		t.Fatalf("seed with a reader:\n%s", out)
	}
}
