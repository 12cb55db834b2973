package e2e

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestRevocationIsGlobal: three instances on one database and one Redis key space, A reaching
// Redis through a proxy the test can cut. A revocation answered by A is refused by B and C on the
// very next request, whether A could write its Redis mark or not, and stays refused everywhere
// once A's Redis is back. Before the revocation lease, B and C trusted a Redis that A's mark never
// reached, and took the logged-out token for as long as its mark was missing.
func TestRevocationIsGlobal(t *testing.T) {
	parallel(t)
	if os.Getenv("TEST_REDIS_MODE") == "cluster" || strings.Contains(testenv.RedisURL(), "addr=") {
		t.Skip("the fault proxy stands in front of one Redis server, not a cluster")
	}
	faults := testenv.NewFaults(t) // registered first: its proxy closes after the instances have stopped
	proxy := faults.RedisProxy()
	db, r := testenv.NewDB(t), testenv.NewRedis(t)
	a := startReplica(t, db, r.Prefix, noAuthLimit, func(c *ioc.Config) { c.Redis.URL = proxy.Rewrite(c.Redis.URL) })
	b := startReplica(t, db, r.Prefix, noAuthLimit)
	c := startReplica(t, db, r.Prefix, noAuthLimit)
	// From here on B and C answer "not revoked" from Redis, under the lease.
	a.waitFor("the revocation lease is held", func() bool {
		return r.Client.Exists(t.Context(), revocationLeaseKey(r.Prefix)).Val() == 1
	})
	acc := signUp(t, b, accountOpts{})
	live := logIn(t, c, acc) // a session nobody revokes: the control

	requireStatus := func(t *testing.T, want int, access string, on ...*testApp) {
		t.Helper()
		for _, app := range on {
			res := app.call(t, "GET", "/api/user", access, nil)
			if res.Status != want {
				t.Fatalf("GET /api/user on %s: %d %s, want %d", app.URL, res.Status, res.Body, want)
			}
			if want == http.StatusUnauthorized {
				requireErrorField(t, res, want, "token")
			}
		}
	}
	// cutA cuts A from Redis until restore, at the latest when the subtest ends; restore waits
	// until A reaches Redis again.
	cutA := func(t *testing.T) (restore func()) {
		proxy.Disable()
		restore = sync.OnceFunc(func() {
			proxy.Enable()
			a.waitFor("A reaches Redis again", func() bool { return a.ready(t) })
		})
		t.Cleanup(restore)
		return restore
	}
	timed := func(t *testing.T, what string, f func()) {
		start := time.Now()
		f()
		t.Logf("%s answered in %s", what, time.Since(start).Round(time.Millisecond))
	}

	t.Run("Redis healthy: a logout on A is refused by B and C at once", func(t *testing.T) {
		s := logIn(t, b, acc)
		requireStatus(t, http.StatusOK, s.Access, a, b, c)
		a.call(t, "POST", "/api/users/logout", s.Access, nil).Expect(t, http.StatusNoContent)
		requireStatus(t, http.StatusUnauthorized, s.Access, b, c, a)
		requireRefreshRefused(t, c.refresh(t, s.Refresh))
	})

	t.Run("A cut from Redis: a logout on A is refused by B and C at once, and everywhere once A's Redis is back", func(t *testing.T) {
		s := logIn(t, b, acc)
		requireStatus(t, http.StatusOK, s.Access, a, b, c)
		restore := cutA(t)
		timed(t, "logout with Redis cut", func() {
			a.call(t, "POST", "/api/users/logout", s.Access, nil).Expect(t, http.StatusNoContent)
		})
		requireStatus(t, http.StatusUnauthorized, s.Access, b, c, a)
		requireStatus(t, http.StatusOK, live.Access, b, c, a)
		// The renewals of B and C repaired Redis from PostgreSQL.
		b.waitFor("Redis has the revocation A could not write", func() bool {
			return r.Client.Exists(t.Context(), revocationMarkKey(t, r.Prefix, s.Access)).Val() == 1
		})

		restore()
		requireStatus(t, http.StatusUnauthorized, s.Access, a, b, c)
		requireStatus(t, http.StatusOK, live.Access, a, b, c)
	})

	t.Run("A cut from Redis: a refresh-token reuse on A is refused by B and C at once, and everywhere once A's Redis is back", func(t *testing.T) {
		s0 := logIn(t, b, acc)
		s1 := refreshOf(t, b.refresh(t, s0.Refresh))
		requireStatus(t, http.StatusOK, s1.Access, a, b, c)
		restore := cutA(t)
		timed(t, "refresh-token reuse with Redis cut", func() {
			requireRefreshRefused(t, a.refresh(t, s0.Refresh)) // the spent token again: theft
		})
		requireStatus(t, http.StatusUnauthorized, s1.Access, b, c, a)
		requireRefreshRefused(t, b.refresh(t, s1.Refresh))
		requireStatus(t, http.StatusOK, live.Access, b, c, a)

		restore()
		requireStatus(t, http.StatusUnauthorized, s1.Access, a, b, c)
	})

	t.Run("an API key revoked on A is refused by B and C at once", func(t *testing.T) {
		created := b.call(t, "POST", "/api/user/api-keys", live.Access, map[string]any{"apiKey": map[string]any{"name": "fleet"}}).
			Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)
		key := created["key"].(string)
		requireStatus(t, http.StatusOK, key, a, b, c)
		path := "/api/user/api-keys/" + strconv.FormatInt(int64(created["id"].(float64)), 10)
		a.call(t, "DELETE", path, live.Access, nil).Expect(t, http.StatusNoContent)
		requireStatus(t, http.StatusUnauthorized, key, b, c, a)
	})

	// Ending many sessions at once marks each of them: all are refused everywhere at once.
	t.Run("logout all on A: every session is refused by B and C at once", func(t *testing.T) {
		other := signUp(t, b, accountOpts{})
		sessions := []session{other.session(), logIn(t, b, other), logIn(t, c, other), logIn(t, a, other)}
		for _, s := range sessions {
			requireStatus(t, http.StatusOK, s.Access, a, b, c)
		}
		a.call(t, "POST", "/api/users/logout", sessions[0].Access, map[string]any{"all": true}).Expect(t, http.StatusNoContent)
		for _, s := range sessions {
			requireStatus(t, http.StatusUnauthorized, s.Access, b, c, a)
			requireRefreshRefused(t, c.refresh(t, s.Refresh))
		}
		requireStatus(t, http.StatusOK, live.Access, a, b, c)
	})

	t.Run("A cut from Redis: a password change on A ends the other sessions on B and C at once, and keeps A's", func(t *testing.T) {
		other := signUp(t, b, accountOpts{})
		kept := logIn(t, a, other)
		ended := []session{other.session(), logIn(t, b, other), logIn(t, c, other)}
		for _, s := range append(ended, kept) {
			requireStatus(t, http.StatusOK, s.Access, a, b, c)
		}
		restore := cutA(t)
		timed(t, "password change with Redis cut", func() {
			a.call(t, "PUT", "/api/user", kept.Access, map[string]any{"user": map[string]any{
				"password": "a fleet-wide new password", "currentPassword": other.Password,
			}}).Expect(t, http.StatusOK)
		})
		for _, s := range ended {
			requireStatus(t, http.StatusUnauthorized, s.Access, b, c, a)
		}
		requireStatus(t, http.StatusOK, kept.Access, b, c, a)
		restore()
		for _, s := range ended {
			requireStatus(t, http.StatusUnauthorized, s.Access, a, b, c)
		}
		requireStatus(t, http.StatusOK, kept.Access, a, b, c)
	})
}
