package e2e

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// aMinute is the in-process cache tiers' TTL (ioc.Tuning.CacheLocalTTL) in the tests that prove a
// change reaches another instance's copy by the invalidation channel, not by expiry.
var aMinute = time.Minute

// maxFleet keeps a typo from starting dozens of instances (each holds PostgreSQL connections).
const maxFleet = 5

// upgradeEnv names the setting that runs the suite through a fleet in the middle of a rolling
// upgrade (make test-upgrade): INKWELL_E2E_UPGRADE=1 makes every startApp two processes on one
// database and one Redis key prefix behind a round-robin HAProxy, one of the previous release
// (apptest.PreviousReleaseFile, built from its commit) and one of the working tree, so requests
// alternate between old and new; startReplica alternates too, the previous release first. Tests
// that need an instance's internals (Wired) skip themselves (inProcess), and so do those listed
// in newSinceThePreviousRelease.
const upgradeEnv = "INKWELL_E2E_UPGRADE"

// newSinceThePreviousRelease lists the tests (top-level names) of behaviour the previous release
// lacks, with what that is: through a mixed fleet they would fail on its instances, as a client
// would see it until the upgrade is done (docs/OPERATIONS.md, "Upgrading a fleet"). A release
// empties the list.
var newSinceThePreviousRelease = map[string]string{
	"TestImageURLs":                            "upload paths as avatars and covers (#29)",
	"TestModeration_Roles":                     "roles and PUT /api/admin/users/:username/role (#28)",
	"TestModeration_HideArticle":               "hiding articles (#28)",
	"TestModeration_HideComment":               "hiding comments (#28)",
	"TestModeration_Suspend":                   "suspensions (#28)",
	"TestFleet_ModerationHoldsOnEveryInstance": "moderation across a fleet (#28)",
	"TestBlocks_EveryRule":                     "blocking users (#28): the block endpoints, refused follows and comments, filtered lists",
	"TestFleet_BlockHoldsOnEveryInstance":      "blocking users (#28) across a fleet",
	"TestMedia_ServedFromEachStore":            "GET /media/:key and the media store's readiness check (#29)",
	"TestFeeds":                                "GET /feeds/articles.atom, /feeds/articles.rss, /feeds/authors/:username.atom, /feeds/tags/:tag.atom (#31)",
	"TestFleet_FeedsDropAtOnce":                "the feeds (#31) across a fleet",
	"TestRender_BodyHTML":                      "bodyHtml in the single-article answers (#31)",
	"TestUploads_EveryRule":                    "POST /api/uploads, GET /api/user/uploads, DELETE /api/uploads/:id and the upload quota (#29)",
	"TestSitemaps_IndexPagesAndRobots":         "GET /sitemap.xml, /sitemaps/articles-N.xml and /robots.txt (#31)",
	"TestOIDC_SignIn":                          "sign-in with providers (#30): GET /api/auth/providers, GET /api/auth/oidc/:provider/start, GET /api/auth/oidc/:provider/callback, POST /api/auth/oidc/exchange, GET /api/user/identities, DELETE /api/user/identities/:id",
	"TestOIDC_TokenChecks":                     "sign-in with providers (#30): the ID token's checks",
	"TestOIDC_Accounts":                        "sign-in with providers (#30): POST /api/auth/oidc/:provider/start (linking), unlink rules",
	"TestOIDC_Fleet":                           "sign-in with providers (#30) across a fleet",
	"TestOIDC_UnreachableIssuer":               "sign-in with providers (#30): an unreachable issuer",
	"TestSchedule_EveryRule":                   "scheduled publishing (#32): POST and DELETE /api/articles/:slug/schedule",
	"TestFleet_ScheduledPublishing":            "scheduled publishing (#32) across a fleet",
	"TestScheduleLateness":                     "scheduled publishing (#32): its lateness",
	"TestSchedule_NowhereUntilPublished":       "scheduled publishing (#32): sitemaps, feeds, tags, hot list",
	"TestCommentThreads":                       "threaded comments (#32): parentId, ?parent=, placeholders, PUT /api/articles/:slug/comments/:id",
	"TestCommentThreadsModeration":             "threaded comments (#32): a hidden comment's replies",
	"TestCommentThreadsPlaceholderEdges":       "threaded comments (#32): keyed replies, placeholders reported and hidden",
	"TestFleet_CommentThreadsShowAtOnce":       "threaded comments (#32) across a fleet",
	"TestNotificationStream":                   "live notifications (#33): GET /api/user/notifications/stream, POST /api/user/notifications/stream/ticket",
	"TestNotificationStreamFleet":              "live notifications (#33) across a fleet",
	"TestNotificationStreamShutdown":           "live notifications (#33): a stream at shutdown",
	"TestNotificationStreamNotices":            "live notifications (#33): moderation notices",
}

// upgradeRun reports whether the suite runs through a mixed fleet (upgradeEnv).
func upgradeRun(t testing.TB) bool {
	t.Helper()
	switch raw := os.Getenv(upgradeEnv); raw {
	case "", "0":
		return false
	case "1":
		if os.Getenv(fleetEnv) != "" {
			t.Fatalf("%s and %s both set: choose one fleet", upgradeEnv, fleetEnv)
		}
		if what, ok := newSinceThePreviousRelease[strings.SplitN(t.Name(), "/", 2)[0]]; ok {
			t.Skipf("tests %s, which the previous release lacks (newSinceThePreviousRelease)", what)
		}
		return true
	default:
		t.Fatalf("%s=%q: want 1 (or 0)", upgradeEnv, raw)
		return false
	}
}

// releases are the binaries of a mixed fleet: the previous release, then the working tree.
func releases(t *testing.T) []apptest.Release {
	t.Helper()
	return []apptest.Release{apptest.PreviousRelease(t), apptest.CurrentRelease(t)}
}

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
	if upgradeRun(t) {
		return 2
	}
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
	if upgradeRun(t) {
		return &testApp{apptest.StartMixedFleet(t, releases(t), tweak...)}
	}
	if poolerRun() {
		app, _ := startPooled(t, tweak...)
		return app
	}
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

// inProcess declares that a test (or subtest) needs its instances in the test's process: it
// drives their internals (Wired: a job's RunOnce, a consumer's stats) or wires one by hand. In an
// upgrade run, whose instances are processes, it is skipped, saying why; the other runs cover it.
func inProcess(t testing.TB, reason string) {
	t.Helper()
	if upgradeRun(t) {
		t.Skipf("in process only: %s (%s=1 runs the suite on processes of two releases; the other runs cover this test)", reason, upgradeEnv)
	}
}

// startReplica serves one more instance on db and the Redis key prefix, as another machine
// behind a load balancer would. Tests that start their instances with it address each one
// directly, in a fleet run too. In an upgrade run the instances are processes, of the previous
// release and the working tree in turn (the previous release first).
func startReplica(t *testing.T, db *testenv.DB, prefix string, tweak ...func(*ioc.Config)) *testApp {
	t.Helper()
	if upgradeRun(t) {
		rels := releases(t)
		return &testApp{apptest.StartProcess(t, rels[replicaTurn(t)%len(rels)], db, prefix, tweak...)}
	}
	return &testApp{apptest.StartReplica(t, db, prefix, tweak...)}
}

// replicaTurns counts each test's startReplica calls (an upgrade run alternates releases).
var replicaTurns = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

func replicaTurn(t *testing.T) int {
	replicaTurns.Lock()
	defer replicaTurns.Unlock()
	n := replicaTurns.n[t.Name()]
	replicaTurns.n[t.Name()] = n + 1
	return n
}
