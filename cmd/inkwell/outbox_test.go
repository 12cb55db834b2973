package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestOutboxCommand lists a dead outbox event, retries it (pending again with fresh attempts),
// refuses to retry or discard an event that is not dead, and discards a dead one.
func TestOutboxCommand(t *testing.T) {
	db := testenv.NewDB(t)
	t.Setenv("DATABASE_URL", db.URL)
	ctx := context.Background()
	var dead, other int64
	if err := db.Pool.QueryRow(ctx, `INSERT INTO outbox (topic, aggregate_id, status, attempts, last_error)
		VALUES ('article.published', 7, 'dead', 10, 'not applied within 120s of publishing (attempt 10)') RETURNING id`).Scan(&dead); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool.QueryRow(ctx, `INSERT INTO outbox (topic, aggregate_id, status) VALUES ('article.withdrawn', 8, 'dead') RETURNING id`).Scan(&other); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"outbox"}, args...), &out, &errOut)
		return out.String(), err
	}

	out, err := cli("list", "--status", "dead")
	if err != nil || !strings.Contains(out, "article.published") || !strings.Contains(out, "attempt 10") || !strings.Contains(out, "dead") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if _, err := cli("list", "--status", "bogus"); err == nil {
		t.Fatal("an unknown status was accepted")
	}
	if out, err := cli("retry", strconv.FormatInt(dead, 10)); err != nil || !strings.Contains(out, "pending again") {
		t.Fatalf("retry: %v %s", err, out)
	}
	var status string
	var attempts int
	if err := db.Pool.QueryRow(ctx, `SELECT status, attempts FROM outbox WHERE id = $1`, dead).Scan(&status, &attempts); err != nil ||
		status != "pending" || attempts != 0 {
		t.Fatalf("after retry: %s, %d attempts (%v)", status, attempts, err)
	}
	if _, err := cli("retry", strconv.FormatInt(dead, 10)); err == nil {
		t.Fatal("retry of a pending event succeeded")
	}
	if _, err := cli("discard", strconv.FormatInt(dead, 10)); err == nil {
		t.Fatal("discard of a pending event succeeded")
	}
	if out, err := cli("discard", strconv.FormatInt(other, 10)); err != nil || !strings.Contains(out, "discarded") {
		t.Fatalf("discard: %v %s", err, out)
	}
	if out, err := cli("list"); err != nil || strings.Contains(out, "article.withdrawn") || !strings.Contains(out, "pending") {
		t.Fatalf("list after discard: %v\n%s", err, out)
	}
	if _, err := cli("retry", "x"); err == nil {
		t.Fatal("a bad id was accepted")
	}
}
