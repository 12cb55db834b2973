package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// testApp is one wired inkwell instance on a loopback port, or a fleet of them behind a balancer
// (INKWELL_E2E_FLEET); the suite's helpers hang off it.
type testApp struct{ *apptest.App }

// response is a decoded HTTP answer.
type response = apptest.Response

const testJWTSecret = apptest.JWTSecret

// fleetEnv names the setting that runs the suite through a fleet: INKWELL_E2E_FLEET=3 makes every
// startApp three instances on one database and one Redis key prefix behind a round-robin HAProxy
// (make test-fleet). Unset, 0 or 1: one instance.
const fleetEnv = "INKWELL_E2E_FLEET"

// maxFleet keeps a typo from starting dozens of instances (each holds PostgreSQL connections).
const maxFleet = 5

// fleetSize is how many instances startApp serves, from fleetEnv.
// parallel marks t parallel, except a subtest in a fleet run. t.Parallel pauses a parallel
// subtest until its parent returns, and the parent then gives its slot of -parallel up while it
// waits for its subtests: its fleet (three instances, each with its LISTEN connections) stays
// alive while later tests start theirs, and in the fleet run the fleets piled up past PostgreSQL's
// max_connections. With subtests in order, a test's fleet is gone before its slot is taken again,
// so -parallel N bounds the fleets alive at N.
func parallel(t *testing.T) {
	t.Helper()
	if fleetSize(t) <= 1 || !strings.Contains(t.Name(), "/") {
		t.Parallel()
	}
}

func fleetSize(t *testing.T) int {
	t.Helper()
	raw := os.Getenv(fleetEnv)
	if raw == "" {
		return 1
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 || n > maxFleet {
		t.Fatalf("%s=%q: want a number of instances, 0..%d", fleetEnv, raw, maxFleet)
	}
	return max(n, 1)
}

// startApp serves inkwell, wired exactly as `inkwell serve` does, on a database and Redis key
// prefix of its own until the test ends: one instance, or with INKWELL_E2E_FLEET=N, N instances
// behind a round-robin HAProxy whose URL the test gets, so each of its requests may land on
// another instance, as a client of a production fleet sees it. app.Wired and app.Cfg are then
// the first instance's.
func startApp(t *testing.T, tweak ...func(*ioc.Config)) *testApp {
	t.Helper()
	if n := fleetSize(t); n > 1 {
		return &testApp{apptest.StartFleet(t, n, tweak...)}
	}
	return &testApp{apptest.Start(t, tweak...)}
}

// singleInstance declares that a test (or subtest) needs startApp to be one process: it inspects
// what one process alone holds (its metrics, its Wired internals) or breaks something under one
// instance. In a fleet run it is skipped, saying why; the run without INKWELL_E2E_FLEET covers it.
func singleInstance(t *testing.T, reason string) {
	t.Helper()
	if n := fleetSize(t); n > 1 {
		t.Skipf("single instance only: %s (%s=%d runs the suite through a balancer; the single-instance run covers this test)", reason, fleetEnv, n)
	}
}

// startReplica serves one more instance on db and the Redis key prefix, as another machine
// behind a load balancer would. Tests that start their instances with it address each one
// directly, in a fleet run too.
func startReplica(t *testing.T, db *testenv.DB, prefix string, tweak ...func(*ioc.Config)) *testApp {
	t.Helper()
	return &testApp{apptest.StartReplica(t, db, prefix, tweak...)}
}
