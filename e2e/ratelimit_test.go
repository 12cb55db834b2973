package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// rateHeaders are the limiter's headers of one answer.
type rateHeaders struct {
	limit, remaining, reset, retryAfter string
}

func rateOf(r response) rateHeaders {
	return rateHeaders{r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"),
		r.Header.Get("X-RateLimit-Reset"), r.Header.Get("Retry-After")}
}

func atoi(t *testing.T, what, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s = %q, not a number", what, s)
	}
	return n
}

// withURLParams returns rawURL with the query parameters kv (name, value, ...) set.
func withURLParams(t *testing.T, rawURL string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func TestRateLimitAcrossInstances(t *testing.T) {
	parallel(t)
	const limit, requests = 50, 200
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	tweak := func(c *ioc.Config) {
		// An hour: the budget refills one request every window/limit (72 s here), and the count
		// is exact only while the burst takes less than that (at 1m, 1.2 s: a slow burst under
		// -race could earn a 51st).
		c.Server.RateAuth = strconv.Itoa(limit) + "/1h"
		// The claim here is one exact budget across instances, not what a slow Redis does: with
		// the default 300 ms read timeout, a burst of 200 under -race beside other packages' tests
		// once had a reply come late, so that request failed open (by design, see
		// TestRateLimitFailsOpenWithRedisDown) and left the count one off.
		c.Redis.URL = withURLParams(t, c.Redis.URL, "read_timeout", "10s", "write_timeout", "10s", "pool_timeout", "20s")
	}
	apps := []*testApp{
		startReplica(t, db, rds.Prefix, tweak),
		startReplica(t, db, rds.Prefix, tweak),
	}
	client := burstClient(t)
	// Refused credentials, refused cheaply: a password over the maximum length is a 401 without
	// an Argon2 verification, so the burst measures the limiter, not the hasher (50 Argon2 runs
	// under -race on a small machine outlast the server's 30 s write timeout).
	badLogin := map[string]any{"user": map[string]any{"email": "nobody@example.com", "password": strings.Repeat("p", 300)}}

	results := make([]response, requests)
	errs := make([]error, requests)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			<-gate
			results[i], errs[i] = apps[i%2].fetch(client, "POST", "/api/users/login", "", badLogin)
		})
	}
	close(gate)
	wg.Wait()

	var allowed, limited int
	perApp := [2][2]int{} // [app][allowed, limited]
	var remaining []int
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		h := rateOf(r)
		if h.limit != strconv.Itoa(limit) {
			t.Fatalf("request %d: X-RateLimit-Limit = %q, want %d (answer %d %s)", i, h.limit, limit, r.Status, r.Body)
		}
		reset := atoi(t, "X-RateLimit-Reset", h.reset)
		if reset < 1 || reset > 3600 {
			t.Fatalf("request %d: X-RateLimit-Reset = %d, want 1..3600 seconds", i, reset)
		}
		switch r.Status {
		case http.StatusTooManyRequests:
			limited++
			perApp[i%2][1]++
			// Retry-After: until one more request fits (72 s), not until the budget is whole.
			if h.retryAfter == "" || atoi(t, "Retry-After", h.retryAfter) > 72 || atoi(t, "Retry-After", h.retryAfter) < 71 || h.remaining != "0" {
				t.Fatalf("429 with Retry-After %q, Reset %q, Remaining %q; want Retry-After 71..72", h.retryAfter, h.reset, h.remaining)
			}
			requireErrorField(t, r, http.StatusTooManyRequests, "body")
		case http.StatusUnauthorized: // bad credentials: counted, and answered
			allowed++
			perApp[i%2][0]++
			if h.retryAfter != "" {
				t.Fatalf("an allowed request carries Retry-After %q", h.retryAfter)
			}
			remaining = append(remaining, atoi(t, "X-RateLimit-Remaining", h.remaining))
		default:
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
	}
	if allowed != limit || limited != requests-limit {
		t.Fatalf("%d allowed and %d limited, want exactly %d and %d", allowed, limited, limit, requests-limit)
	}
	// One counter for both instances: the allowed requests saw 49, 48, ..., 0 remaining, each once.
	slices.Sort(remaining)
	for i, r := range remaining {
		if r != i {
			t.Fatalf("Remaining values of the allowed requests = %v, want 0..%d each once", remaining, limit-1)
		}
	}
	t.Logf("instance A: %d allowed, %d limited; instance B: %d allowed, %d limited", perApp[0][0], perApp[0][1], perApp[1][0], perApp[1][1])

	// Still limited, on either instance, for registration too (same auth budget, same client IP).
	for _, app := range apps {
		app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{
			"username": "late" + testenv.RandomID(3), "email": "late" + testenv.RandomID(3) + "@example.com", "password": "correct horse battery",
		}}).Expect(t, http.StatusTooManyRequests)
	}
}

func TestRateLimitPerUserWrites(t *testing.T) {
	parallel(t)
	app := startApp(t, func(c *ioc.Config) { c.Server.RateWrites, c.Server.RateAuth = "3/1m", "0" })
	a, b := signUp(t, app, accountOpts{}), signUp(t, app, accountOpts{})

	for want := 2; want >= 0; want-- {
		res := app.call(t, "POST", "/api/articles", a.Token, newArticle("Limited "+testenv.RandomID(4))).Expect(t, http.StatusCreated)
		if h := rateOf(res); h.limit != "3" || h.remaining != strconv.Itoa(want) || h.retryAfter != "" {
			t.Fatalf("write headers %+v, want limit 3, remaining %d", h, want)
		}
	}
	for _, w := range []struct{ method, path string }{
		{"POST", "/api/articles"}, {"PUT", "/api/user"}, {"POST", "/api/user/api-keys"},
	} {
		res := app.call(t, w.method, w.path, a.Token, map[string]any{"article": map[string]any{"title": "x"}})
		requireErrorField(t, res, http.StatusTooManyRequests, "body")
		if h := rateOf(res); h.retryAfter == "" || atoi(t, "Retry-After", h.retryAfter) < 1 {
			t.Fatalf("%s %s: 429 without Retry-After: %+v", w.method, w.path, h)
		}
	}
	// Reads are never counted, even past the write budget.
	for range 10 {
		for _, path := range []string{"/api/user", "/api/articles/feed", "/api/user/articles", "/api/user/api-keys"} {
			res := app.call(t, "GET", path, a.Token, nil).Expect(t, http.StatusOK)
			if h := rateOf(res); h.limit != "" {
				t.Fatalf("GET %s carries rate-limit headers %+v", path, h)
			}
		}
	}
	// The budget is per user.
	app.call(t, "POST", "/api/articles", b.Token, newArticle("Other user "+testenv.RandomID(4))).Expect(t, http.StatusCreated)
	if n := app.pgCount(t, `SELECT count(*) FROM articles a JOIN users u ON u.id = a.author_id WHERE u.username = $1`, a.Username); n != 3 {
		t.Fatalf("%d articles by the limited user, want 3", n)
	}
}

func TestRateLimitFailsOpenWithRedisDown(t *testing.T) {
	parallel(t)
	redisSrv := testenv.StartRedisServer(t)
	app := startApp(t, func(c *ioc.Config) {
		c.Redis.URL = redisSrv.URL()
		c.Server.RateAuth, c.Server.RateWrites = "2/1m", "2/1m"
	})
	acc := signUp(t, app, accountOpts{})
	// Redis up: the limits count.
	if h := rateOf(app.call(t, "POST", "/api/articles", acc.Token, newArticle("Before "+testenv.RandomID(4))).Expect(t, http.StatusCreated)); h.limit != "2" {
		t.Fatalf("with Redis up, write headers %+v", h)
	}

	redisSrv.Stop()
	login := map[string]any{"user": map[string]any{"email": acc.Email, "password": acc.Password}}
	for i := range 5 { // more than either budget
		res := app.call(t, "POST", "/api/users/login", "", login)
		if res.Status != http.StatusOK {
			t.Fatalf("login %d with Redis down: %d %s", i, res.Status, res.Body)
		}
		if h := rateOf(res); h != (rateHeaders{}) {
			t.Fatalf("rate-limit headers %+v without a limiter", h)
		}
		res = app.call(t, "POST", "/api/articles", acc.Token, newArticle("During "+testenv.RandomID(4)))
		if res.Status != http.StatusCreated {
			t.Fatalf("write %d with Redis down: %d %s", i, res.Status, res.Body)
		}
	}
	app.call(t, "GET", "/api/user", acc.Token, nil).Expect(t, http.StatusOK)
}

// TestRateLimitHasNoWindowBoundary: a client that sends one request, keeps quiet for half a
// window and then sends as fast as it can for a whole window never gets more than the budget
// plus what it earned meanwhile through in any stretch of its requests: limit + stretch /
// (window/limit). The fixed window it replaces let the rest of one window's budget and all of the
// next one's through within moments of the window's end: 2·limit-1 here, at once.
func TestRateLimitHasNoWindowBoundary(t *testing.T) {
	parallel(t)
	const limit, window = 10, time.Second
	const interval = window / limit
	app := startApp(t, func(c *ioc.Config) {
		c.Server.RateAuth = strconv.Itoa(limit) + "/" + window.String()
		// A reply later than the default 300 ms read timeout would fail open (by design) and
		// count as neither admitted nor refused; the claim here is about the limiter's decisions.
		c.Redis.URL = withURLParams(t, c.Redis.URL, "read_timeout", "10s", "write_timeout", "10s")
	})
	badLogin := map[string]any{"user": map[string]any{"email": "nobody@example.com", "password": strings.Repeat("p", 300)}}
	type admission struct{ sent, answered time.Time }
	var admitted []admission
	send := func() {
		t.Helper()
		sent := time.Now()
		res := app.call(t, "POST", "/api/users/login", "", badLogin)
		switch {
		case res.Status == http.StatusUnauthorized && rateOf(res).limit != "":
			admitted = append(admitted, admission{sent, time.Now()})
		case res.Status == http.StatusTooManyRequests, res.Status == http.StatusUnauthorized: // refused; failed open
		default:
			t.Fatalf("login: %d %s", res.Status, res.Body)
		}
	}
	start := time.Now()
	send()
	time.Sleep(window / 2) // the quiet half window: not a synchronisation, the client's pattern
	for time.Since(start) < window/2+window {
		send()
	}
	for i := range admitted {
		for j := i; j < len(admitted); j++ {
			stretch := admitted[j].answered.Sub(admitted[i].sent)
			if n := j - i + 1; float64(n) > limit+float64(stretch)/float64(interval) {
				t.Fatalf("%d requests admitted within %v, want at most %d + %v / %v (admissions %d..%d of %d)",
					n, stretch.Round(time.Millisecond), limit, stretch.Round(time.Millisecond), interval, i+1, j+1, len(admitted))
			}
		}
	}
	if len(admitted) < limit {
		t.Fatalf("only %d requests admitted in %v, want at least the budget, %d", len(admitted), window/2+window, limit)
	}
}

// TestRateLimitSearchPerClient: the three search endpoints share one budget per client, the
// client IP as the trusted proxy names it or the signed-in user; a search over it is 429 with
// Retry-After, and other clients search on.
func TestRateLimitSearchPerClient(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit, func(c *ioc.Config) {
		c.Server.RateWrites, c.Server.RateSearch = "0", "3/1h" // one search every 20 minutes after the first 3
		c.Server.TrustedProxies = "127.0.0.1"                  // the test is the proxy: X-Forwarded-For names the client
	})
	acc := signUp(t, app, accountOpts{})
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }
	for i, path := range []string{"/api/search/articles?q=dragons", "/api/search/users?q=jake", "/api/search/tags?q=dr"} {
		res := app.call(t, "GET", path, "", nil, from("203.0.113.1")...).Expect(t, http.StatusOK)
		if h := rateOf(res); h.limit != "3" || h.remaining != strconv.Itoa(2-i) || h.retryAfter != "" {
			t.Fatalf("GET %s: headers %+v, want limit 3, remaining %d", path, h, 2-i)
		}
	}
	res := app.call(t, "GET", "/api/search/articles?q=dragons", "", nil, from("203.0.113.1")...)
	requireErrorField(t, res, http.StatusTooManyRequests, "body")
	if h := rateOf(res); h.remaining != "0" || atoi(t, "Retry-After", h.retryAfter) < 1199 || atoi(t, "Retry-After", h.retryAfter) > 1200 {
		t.Fatalf("over the budget: headers %+v, want Retry-After 1199..1200 (one search every 20 minutes)", h)
	}
	// Another client, and a signed-in user at the limited client's address, have budgets of their own.
	app.call(t, "GET", "/api/search/articles?q=dragons", "", nil, from("203.0.113.2")...).Expect(t, http.StatusOK)
	res = app.call(t, "GET", "/api/search/articles?q=dragons", acc.Token, nil, from("203.0.113.1")...).Expect(t, http.StatusOK)
	if h := rateOf(res); h.remaining != "2" {
		t.Fatalf("the signed-in user's first search: headers %+v, want 2 remaining", h)
	}
}
