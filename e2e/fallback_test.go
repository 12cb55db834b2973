package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestBurstWithRedisDown: with the app's Redis stopped every cache read falls back to
// PostgreSQL, bounded per instance (cache.FallbackConcurrency, here 1 with no wait, so a
// burst must overflow it). A burst of reads then gets only 200s and 503s — each 503 with
// Retry-After: 1 and a RealWorld error body — and never a 500.
func TestBurstWithRedisDown(t *testing.T) {
	parallel(t)
	inProcess(t, "sets tuning constants through ioc.Config.Tune, which no setting carries to a process")
	redisSrv := testenv.StartRedisServer(t)
	app := startApp(t, func(c *ioc.Config) {
		c.Redis.URL = redisSrv.URL()
		c.Tune.DBFallbackConcurrency, c.Tune.DBFallbackWait = new(1), new(time.Duration(0))
	})
	author := app.Register("fallbackauthor")
	const articles, burst = 8, 48
	slugs := make([]string, articles)
	for i := range slugs {
		slugs[i] = app.publish(author, fmt.Sprintf("Read while Redis is down %d", i))
	}
	redisSrv.Stop()

	// A burst races for one slot per instance; the first bursts may all squeeze through, so
	// up to a few are sent until one has been shed.
	shed, served := 0, 0
	for round := 0; round < 5 && shed == 0; round++ {
		var wg sync.WaitGroup
		got := make([]response, burst)
		errs := make([]error, burst)
		for i := range burst {
			wg.Go(func() {
				path := "/api/articles/" + slugs[i%articles]
				if i%4 == 3 {
					path = "/api/profiles/fallbackauthor"
				}
				got[i], errs[i] = app.fetch(nil, "GET", path, "", nil)
			})
		}
		wg.Wait()
		for i, r := range got {
			if errs[i] != nil {
				t.Fatalf("request %d: %v", i, errs[i])
			}
			switch r.Status {
			case http.StatusOK:
				served++
			case http.StatusServiceUnavailable:
				shed++
				if ra := r.Header.Get("Retry-After"); ra != "1" {
					t.Errorf("503 with Retry-After %q, want 1; body %s", ra, r.Body)
				}
				var body struct {
					Errors map[string][]string `json:"errors"`
				}
				if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Errors["body"]) != 1 {
					t.Errorf("503 body %s is not the RealWorld error shape (%v)", r.Body, err)
				}
			default:
				t.Fatalf("request %d: status %d%s, want 200 or 503; body %s", i, r.Status, r.ServedBy(), r.Body)
			}
		}
	}
	if served == 0 || shed == 0 {
		t.Fatalf("%d served and %d shed: want both (the limit must bound the fallback without refusing everything)", served, shed)
	}
	t.Logf("with Redis down: %d served, %d answered 503", served, shed)
}
