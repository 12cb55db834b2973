package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestReplicas_ReadYourWritesThroughTheFleet: three instances behind HAProxy on a primary whose
// streaming replica replays 500 ms behind (DATABASE_REPLICA_URLS). A user edits their article
// through whichever instance the balancer picks and at once reads it back through the next, 1,000
// times, from a list page (routed to a replica when one has replayed the user's write) and from
// the article itself (a cache fill after the edit's invalidation): every read shows the edit.
// Anonymous list reads meanwhile are served by the replica too.
func TestReplicas_ReadYourWritesThroughTheFleet(t *testing.T) {
	parallel(t)
	inProcess(t, "the instances are wired with replica settings a previous release does not have")
	db, rds := testenv.NewReplicatedDB(t), testenv.NewRedis(t)
	withReplica := func(c *ioc.Config) {
		c.Database.ReplicaURLs = db.ReplicaURL
		c.Server.RateWrites = "0"
	}
	addrs := make([]string, 3)
	instances := make([]*apptest.App, len(addrs))
	for i := range addrs {
		instances[i] = apptest.StartReplica(t, &db.DB, rds.Prefix, noAuthLimit, noCron, withReplica)
		addrs[i] = strings.TrimPrefix(instances[i].URL, "http://")
	}
	fleet := &testApp{&apptest.App{T: t, URL: apptest.StartBalancer(t, addrs), HTTP: &http.Client{}}}

	token := fleet.Register("replicareader")
	slug := fleet.publish(token, "Replica read your writes")
	replicaScans := func() int64 {
		var n int64
		if err := db.ReplicaPool.QueryRow(context.Background(),
			`SELECT COALESCE(sum(COALESCE(idx_scan, 0) + seq_scan), 0)::bigint FROM pg_stat_user_tables WHERE relname = 'articles'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	scansBefore := replicaScans()

	const checks = 1000
	seen := 0
	for i := range checks {
		want := fmt.Sprintf("edit %d", i)
		fleet.Do("PUT", "/api/articles/"+slug, token, map[string]any{"article": map[string]any{"description": want}}).Expect(t, http.StatusOK)
		list := fleet.Do("GET", "/api/articles?author=replicareader&limit=5", token, nil).Expect(t, http.StatusOK).JSON(t)
		arts, _ := list["articles"].([]any)
		if len(arts) != 1 || arts[0].(map[string]any)["description"] != want {
			t.Fatalf("check %d of %d: the author's list after the edit shows %v, want %q", i+1, checks, arts, want)
		}
		if got := fleet.Do("GET", "/api/articles/"+slug, token, nil).Expect(t, http.StatusOK).Article(t)["description"]; got != want {
			t.Fatalf("check %d of %d: the article after the edit shows %q, want %q", i+1, checks, got, want)
		}
		seen++
		fleet.Do("GET", "/api/articles?limit=5", "", nil).Expect(t, http.StatusOK)
	}
	if seen != checks {
		t.Fatalf("%d of %d reads saw their write", seen, checks)
	}
	testenv.WaitUntil(t, "the replica's statistics to show the reads it served", func() bool { return replicaScans() > scansBefore })
	// Each instance says where its reads went, and how far behind the replica is.
	for i, app := range instances {
		m := app.Metrics()
		if !regexp.MustCompile(`(?m)^inkwell_db_routed_reads_total\{target="replica"\} [1-9]`).MatchString(m) {
			t.Errorf("instance %d's metrics show no read served by the replica", i+1)
		}
		if !strings.Contains(m, `inkwell_replica_lag_bytes{replica="replica 1"}`) {
			t.Errorf("instance %d's metrics lack the replica's lag", i+1)
		}
	}
}
