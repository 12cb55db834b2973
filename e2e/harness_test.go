package e2e

import (
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// testApp is one wired inkwell instance on a loopback port; the suite's helpers hang off it.
type testApp struct{ *apptest.App }

// response is a decoded HTTP answer.
type response = apptest.Response

const testJWTSecret = apptest.JWTSecret

// startApp serves inkwell, wired exactly as `inkwell serve` does, on a database and Redis key
// prefix of its own until the test ends.
func startApp(t *testing.T, tweak ...func(*ioc.Config)) *testApp {
	t.Helper()
	return &testApp{apptest.Start(t, tweak...)}
}

// startReplica serves one more instance on db and the Redis key prefix, as another machine
// behind a load balancer would.
func startReplica(t *testing.T, db *testenv.DB, prefix string, tweak ...func(*ioc.Config)) *testApp {
	t.Helper()
	return &testApp{apptest.StartReplica(t, db, prefix, tweak...)}
}
