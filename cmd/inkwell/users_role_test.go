package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestUsersRole: `inkwell users role` makes the first admin while a server runs whose in-process
// tier holds the account for a minute; right when the command returns, the server answers the new
// role, and the admin can use the admin endpoint. A role that does not exist exits 2 with one line.
func TestUsersRole(t *testing.T) {
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	app := apptest.StartReplica(t, db, rds.Prefix, func(c *ioc.Config) { c.Tune.CacheLocalTTL = &aMinute })
	waitSubscribed(t, app)
	t.Setenv("DATABASE_URL", db.URL+"&pool_max_conns=4")
	t.Setenv("REDIS_URL", testenv.RedisURL())
	t.Setenv("INKWELL_REDIS_MODE", testenv.RedisMode())
	t.Setenv("INKWELL_REDIS_PREFIX", rds.Prefix)

	boss := app.Register("boss")
	app.Register("helper")
	role := func() any {
		return app.Do("GET", "/api/user", boss, nil).Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)["role"]
	}
	if got := role(); got != "user" { // read twice: the second from the server's tier
		t.Fatalf("role before: %v", got)
	}
	role()

	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"users", "role", "boss", "admin"}, &out, &errOut); err != nil {
		t.Fatalf("users role: %v (%s)", err, errOut.String())
	}
	if !strings.Contains(out.String(), "boss is now admin") {
		t.Fatalf("output: %q", out.String())
	}
	if got := role(); got != "admin" {
		t.Fatalf("right after the command the server answers role %v, want admin", got)
	}
	app.Do("PUT", "/api/admin/users/helper/role", boss, map[string]any{"role": "moderator"}).Expect(t, http.StatusOK)

	err := run(context.Background(), []string{"users", "role", "boss", "superuser"}, &out, &errOut)
	var stderr bytes.Buffer
	if code := exitCode(err, &stderr); code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "must be one of user, moderator, admin") {
		t.Fatalf("an unknown role: exit %d, stderr %q", code, stderr.String())
	}
	if err := run(context.Background(), []string{"users", "role", "nobody", "admin"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), `no user named "nobody"`) {
		t.Fatalf("an unknown user: %v", err)
	}
}
