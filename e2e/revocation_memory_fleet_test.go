package e2e

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestRevocationMemoryIsGlobal: B and C have just served a session many times, so they remember
// in process that it is not revoked (their metrics say they answered from that memory); a
// logout on A is refused by both on the very next request. Repeated, so a revocation that only
// sometimes beats the next request would show.
func TestRevocationMemoryIsGlobal(t *testing.T) {
	parallel(t)
	db, r := testenv.NewDB(t), testenv.NewRedis(t)
	a := startReplica(t, db, r.Prefix, noAuthLimit)
	b := startReplica(t, db, r.Prefix, noAuthLimit)
	c := startReplica(t, db, r.Prefix, noAuthLimit)
	a.waitFor("the revocation lease is held", func() bool {
		return r.Client.Exists(t.Context(), revocationLeaseKey(r.Prefix)).Val() == 1
	})
	acc := signUp(t, b, accountOpts{})
	status := func(app *testApp, access string) int { return app.call(t, "GET", "/api/user", access, nil).Status }
	for i := range 20 {
		s := logIn(t, b, acc)
		hitsB, hitsC := memoryHits(t, b), memoryHits(t, c)
		for range 3 {
			for _, app := range []*testApp{b, c} {
				if got := status(app, s.Access); got != http.StatusOK {
					t.Fatalf("round %d: GET /api/user on %s before the logout: %d", i, app.URL, got)
				}
			}
		}
		if memoryHits(t, b) == hitsB || memoryHits(t, c) == hitsC {
			t.Fatalf("round %d: B or C never answered from memory (hits %d→%d, %d→%d)", i, hitsB, memoryHits(t, b), hitsC, memoryHits(t, c))
		}
		a.call(t, "POST", "/api/users/logout", s.Access, nil).Expect(t, http.StatusNoContent)
		for _, app := range []*testApp{b, c} {
			res := app.call(t, "GET", "/api/user", s.Access, nil)
			if res.Status != http.StatusUnauthorized {
				t.Fatalf("round %d: GET /api/user on %s right after the logout on A: %d %s, want 401", i, app.URL, res.Status, res.Body)
			}
			requireErrorField(t, res, http.StatusUnauthorized, "token")
		}
	}
}

var memoryHitsLine = regexp.MustCompile(`(?m)^inkwell_revocation_memory_hits_total (\d+)$`)

// memoryHits is how many access tokens app answered from its "not revoked" memory.
func memoryHits(t *testing.T, app *testApp) int64 {
	t.Helper()
	m := memoryHitsLine.FindStringSubmatch(app.metrics())
	if m == nil {
		t.Fatal("no inkwell_revocation_memory_hits_total in /metrics")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}
