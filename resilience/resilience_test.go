package resilience

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestResilience injects real network faults between the app and its stores through an
// in-process toxiproxy (Redis latency beyond its timeouts, Redis connections reset, Redis down,
// PostgreSQL connections reset, PostgreSQL restarted) while a steady load of reads and writes
// runs, and checks what the service promises under each: reads of existing articles succeed
// (served from PostgreSQL when Redis fails, from Redis when PostgreSQL does), every acknowledged
// write is in PostgreSQL, counters are exact once the fault clears, the service recovers by
// itself within seconds, and every failure is a 503 with a clear message, never a 500.
//
// Every fault gets the same timeline on the same app: load for resBefore, the fault for
// resDuring, load for resAfter once it is removed. The table logged at the end gives, per fault
// and window, the request count, error rate and p99.
func TestResilience(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs for about 40 s")
	}
	if os.Getenv("TEST_REDIS_MODE") == "cluster" || strings.Contains(testenv.RedisURL(), "addr=") {
		t.Skip("the fault proxies stand in front of one Redis server, not a cluster")
	}
	faults := testenv.NewFaults(t) // registered first: its proxies close after the app has stopped
	pgProxy := faults.PostgresProxy()
	redisProxy := faults.RedisProxy()

	app := apptest.Start(t, func(c *ioc.Config) {
		c.Database.URL = pgProxy.Rewrite(c.Database.URL)
		c.Redis.URL = redisProxy.Rewrite(c.Redis.URL)
		c.Server.RateWrites = "100000/1m"          // the limiter runs (and fails open under Redis faults) but never limits the load
		c.Tune.CacheJitter = new(time.Duration(0)) // a hash's TTL then tells when it was filled (see checkWrites)
	})
	w := seedWorld(t, app)

	type fault struct {
		name, store  string // store: "redis" or "postgres"
		apply, clear func()
	}
	faultList := []fault{
		{"redis latency 1s (> 300ms timeouts)", "redis",
			func() { redisProxy.Toxic("slow", "latency", "downstream", map[string]any{"latency": 1000}) },
			func() { redisProxy.RemoveToxic("slow") }},
		{"redis connections reset", "redis",
			func() { redisProxy.Toxic("reset", "reset_peer", "upstream", map[string]any{"timeout": 0}) },
			func() { redisProxy.RemoveToxic("reset") }},
		{"redis down", "redis", redisProxy.Disable, redisProxy.Enable},
		{"postgres connections reset", "postgres",
			func() { pgProxy.Toxic("reset", "reset_peer", "upstream", map[string]any{"timeout": 0}) },
			func() { pgProxy.RemoveToxic("reset") }},
		{"postgres restarted", "postgres", pgProxy.Disable, pgProxy.Enable},
	}

	var table []string
	suiteStart := time.Now()
	for _, f := range faultList {
		ok := t.Run(f.name, func(t *testing.T) {
			run := w.runFault(f.apply, f.clear)
			rows, counters := w.check(t, f.name, f.store, run)
			table = append(table, rows...)
			table = append(table, fmt.Sprintf("  %-36s counters: %s", "", counters))
		})
		if !ok {
			break // later faults would start from a broken state and say nothing new
		}
	}
	t.Logf("fault injection, %s per fault (before %s / during %s / after %s), total %s:\n%-36s %-7s %6s %7s %8s %8s | %-22s | %-22s | %-22s\n%s",
		resBefore+resDuring+resAfter, resBefore, resDuring, resAfter, time.Since(suiteStart).Round(100*time.Millisecond),
		"fault", "window", "reqs", "err%", "p99", "max",
		"read err%/p99", "pg-read err%/p99", "write err%/p99", strings.Join(table, "\n"))
}

const (
	resBefore = 1 * time.Second
	resDuring = 3 * time.Second
	resAfter  = 3 * time.Second

	// The writes stop this long before the reads: a count read in process may lag this process's
	// own latest like by up to the counters' in-process TTL (1 s), and the check at the end of each
	// fault wants the settled count.
	resQuiet = 1500 * time.Millisecond

	resReaders      = 4
	resWriters      = 2
	resReadPace     = 10 * time.Millisecond // per reader: at most 100 requests a second
	resWritePace    = 20 * time.Millisecond // per writer
	resMaxPerWorker = 3000                  // hard bound on the requests of one worker in one fault

	// The service must be answering PostgreSQL-backed requests again this long after the fault
	// clears (plus the p99 before the fault: the machine may be slow).
	resRecoverWithin = 2 * time.Second
	// A Redis that answers later than its 300 ms read timeout costs each Redis call one timeout
	// (no retries) until five fail in a row and the circuit breaker opens; from then on Redis is
	// not called (bar one probe a second) and requests cost what PostgreSQL costs. A request makes
	// up to three Redis calls, so the few caught as the fault begins take about 1 s; the p99 during
	// the fault may exceed the p99 before it by at most this. (Before the breaker, and with
	// go-redis retrying timeouts, every request during the fault took over 2 s.)
	resSlowRedisCost = time.Second

	unavailableMessage = "the service is temporarily unavailable; retry shortly"
)

type resUser struct {
	name, token string
	id          int64
}

type resArticle struct {
	slug string
	id   int64
}

type likeKey struct{ user, article int }

// likeState is what the load knows of one (user, article) like.
type likeState struct {
	want    bool // the state of the last acknowledged favorite/unfavorite
	certain bool // false when a later request failed: PostgreSQL may hold either state
	last    bool // the state the last request asked for
}

// resWorld is the seeded data and what the load has been told, across faults.
type resWorld struct {
	app      *apptest.App
	client   *http.Client
	users    []resUser
	articles []resArticle

	mu       sync.Mutex
	likes    map[likeKey]*likeState
	comments []int64 // ids of acknowledged comments
	history  []likeOp
}

// likeOp is one favorite/unfavorite request, for the diagnosis of a wrong count.
type likeOp struct {
	at      time.Time // when the answer came
	article int
	user    int
	on, ok  bool
}

func seedWorld(t *testing.T, app *apptest.App) *resWorld {
	t.Helper()
	w := &resWorld{app: app, likes: map[likeKey]*likeState{},
		client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	t.Cleanup(w.client.CloseIdleConnections)
	author := app.Register("res_author")
	for i := range 4 {
		a := app.Do("POST", "/api/articles", author, apptest.NewArticle(fmt.Sprintf("Resilience %d", i))).Expect(t, 201).Article(t)
		w.articles = append(w.articles, resArticle{slug: a["slug"].(string)})
	}
	for i := range 6 {
		name := fmt.Sprintf("res_fan%d", i)
		w.users = append(w.users, resUser{name: name, token: app.Register(name)})
	}
	ctx := context.Background()
	for i := range w.articles {
		if err := app.DB.Pool.QueryRow(ctx, `SELECT id FROM articles WHERE slug = $1`, w.articles[i].slug).Scan(&w.articles[i].id); err != nil {
			t.Fatal(err)
		}
		app.Do("GET", "/api/articles/"+w.articles[i].slug, "", nil).Expect(t, 200) // warm the caches
	}
	for i := range w.users {
		if err := app.DB.Pool.QueryRow(ctx, `SELECT id FROM users WHERE username = $1`, w.users[i].name).Scan(&w.users[i].id); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// sample is one request of the load.
type sample struct {
	class      string // read (GET article), pg-read (GET comments), write
	path       string
	start, end time.Duration // since the load started
	status     int           // 0: no HTTP answer
	errText    string        // transport error, or the body of a non-2xx answer
	retryAfter string
}

func (s sample) ok() bool { return s.status >= 200 && s.status < 300 }

// faultRun is the record of one fault: the samples and when the fault was on.
type faultRun struct {
	samples        []sample
	applied, clear time.Duration
	end            time.Duration
}

// runFault runs the load for resBefore, applies the fault for resDuring, clears it and keeps the
// load for resAfter. The windows are wall-clock time on purpose: the faults are meant to last
// seconds under a steady load.
func (w *resWorld) runFault(apply, clear func()) *faultRun {
	run := &faultRun{}
	var mu sync.Mutex
	t0 := time.Now()
	record := func(s sample) {
		mu.Lock()
		run.samples = append(run.samples, s)
		mu.Unlock()
	}
	ctx, stop := context.WithCancel(context.Background())
	wctx, stopWrites := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for r := range resReaders {
		wg.Go(func() { w.reader(ctx, t0, r, record) })
	}
	for wr := range resWriters {
		wg.Go(func() { w.writer(wctx, t0, wr, record) })
	}
	time.Sleep(resBefore)
	run.applied = time.Since(t0)
	apply()
	time.Sleep(resDuring)
	run.clear = time.Since(t0)
	clear()
	time.Sleep(resAfter - resQuiet)
	stopWrites()
	time.Sleep(resQuiet)
	stop()
	wg.Wait()
	run.end = time.Since(t0)
	return run
}

// pace waits for the next tick; it returns false once ctx is done.
func pace(ctx context.Context, tick *time.Ticker) bool {
	select {
	case <-ctx.Done():
		return false
	case <-tick.C:
		return true
	}
}

// reader fetches existing articles anonymously (cacheable reads) and, one time in five, their
// comments (a read PostgreSQL must answer).
func (w *resWorld) reader(ctx context.Context, t0 time.Time, seed int, record func(sample)) {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	tick := time.NewTicker(resReadPace)
	defer tick.Stop()
	for range resMaxPerWorker {
		if !pace(ctx, tick) {
			return
		}
		a := w.articles[rng.IntN(len(w.articles))]
		if rng.IntN(5) == 0 {
			s, _ := w.send(t0, "pg-read", "GET", "/api/articles/"+a.slug+"/comments", "", nil)
			record(s)
			continue
		}
		s, _ := w.send(t0, "read", "GET", "/api/articles/"+a.slug, "", nil)
		record(s)
	}
}

// writer toggles likes of its own users (so no two requests on one like race) and comments,
// recording every acknowledgement.
func (w *resWorld) writer(ctx context.Context, t0 time.Time, idx int, record func(sample)) {
	rng := rand.New(rand.NewPCG(uint64(idx), 11))
	var mine []int
	for i := range w.users {
		if i%resWriters == idx {
			mine = append(mine, i)
		}
	}
	tick := time.NewTicker(resWritePace)
	defer tick.Stop()
	for n := range resMaxPerWorker {
		if !pace(ctx, tick) {
			return
		}
		u := mine[rng.IntN(len(mine))]
		ai := rng.IntN(len(w.articles))
		a, user := w.articles[ai], w.users[u]
		if n%2 == 1 {
			s, raw := w.send(t0, "write", "POST", "/api/articles/"+a.slug+"/comments", user.token,
				map[string]any{"comment": map[string]any{"body": fmt.Sprintf("comment %d of writer %d", n, idx)}})
			record(s)
			if s.ok() {
				var out struct {
					Comment struct {
						ID int64 `json:"id"`
					} `json:"comment"`
				}
				if err := json.Unmarshal(raw, &out); err == nil && out.Comment.ID > 0 {
					w.mu.Lock()
					w.comments = append(w.comments, out.Comment.ID)
					w.mu.Unlock()
				} else {
					s.status, s.errText = 0, fmt.Sprintf("comment acknowledged without an id: %s", raw)
					record(s) // counted again, as a failure
				}
			}
			continue
		}
		key := likeKey{u, ai}
		w.mu.Lock()
		st := w.likes[key]
		if st == nil {
			st = &likeState{certain: true}
			w.likes[key] = st
		}
		on := !st.want // toggle what is known ...
		if !st.certain {
			on = st.last // ... or repeat the request whose outcome is unknown (both are idempotent)
		}
		st.last = on
		w.mu.Unlock()
		method := "DELETE"
		if on {
			method = "POST"
		}
		s, _ := w.send(t0, "write", method, "/api/articles/"+a.slug+"/favorite", user.token, nil)
		record(s)
		w.mu.Lock()
		if s.ok() {
			st.want, st.certain = on, true
		} else {
			st.certain = false
		}
		w.history = append(w.history, likeOp{at: time.Now(), article: ai, user: u, on: on, ok: s.ok()})
		w.mu.Unlock()
	}
}

// send makes one request of the load; it never fails the test (the checks read the samples).
func (w *resWorld) send(t0 time.Time, class, method, path, token string, body any) (sample, []byte) {
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	s := sample{class: class, path: path, start: time.Since(t0)}
	req, err := http.NewRequest(method, w.app.URL+path, r)
	if err != nil {
		s.errText = err.Error()
		return s, nil
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	res, err := w.client.Do(req)
	if err != nil {
		s.end, s.errText = time.Since(t0), err.Error()
		return s, nil
	}
	raw, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	s.end, s.status, s.retryAfter = time.Since(t0), res.StatusCode, res.Header.Get("Retry-After")
	if err != nil {
		s.status, s.errText = 0, "reading the body: "+err.Error()
	} else if !s.ok() {
		s.errText = string(raw)
	}
	return s, raw
}

// failures summarizes the failed requests of class: how many per path and answer, so that a
// failure says which requests failed and how.
func (run *faultRun) failures(class string) string {
	counts := map[string]int{}
	for _, s := range run.samples {
		if s.class == class && !s.ok() {
			counts[fmt.Sprintf("%s → %d %.120s", s.path, s.status, s.errText)]++
		}
	}
	var lines []string
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("%d× %s", n, k))
	}
	slices.Sort(lines)
	return strings.Join(lines, "; ")
}

// The windows of a fault: before holds the requests that ended before the fault was applied,
// during those that overlapped it, after those that started once it was removed.
const (
	winBefore = "before"
	winDuring = "during"
	winAfter  = "after"
)

func (run *faultRun) window(s sample) string {
	switch {
	case s.end <= run.applied:
		return winBefore
	case s.start >= run.clear:
		return winAfter
	default:
		return winDuring
	}
}

// windowStats summarizes the samples of one window ("" for all) and class ("" for all).
type windowStats struct {
	n, errs   int
	p99, max  time.Duration
	errorRate float64
}

func (run *faultRun) stats(win, class string) windowStats {
	var ws windowStats
	var durs []time.Duration
	for _, s := range run.samples {
		if (win != "" && run.window(s) != win) || (class != "" && s.class != class) {
			continue
		}
		ws.n++
		if !s.ok() {
			ws.errs++
		}
		durs = append(durs, s.end-s.start)
	}
	if ws.n == 0 {
		return ws
	}
	slices.Sort(durs)
	ws.p99 = durs[int(math.Ceil(0.99*float64(len(durs))))-1]
	ws.max = durs[len(durs)-1]
	ws.errorRate = float64(ws.errs) / float64(ws.n)
	return ws
}

func (ws windowStats) short() string {
	if ws.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%5.1f%% %7s (%d)", 100*ws.errorRate, ws.p99.Round(time.Millisecond), ws.n)
}

// check asserts what the service promises under the fault just run and returns the table rows
// and a line on the counters.
func (w *resWorld) check(t *testing.T, name, store string, run *faultRun) ([]string, string) {
	t.Helper()
	var rows []string
	for i, win := range []string{winBefore, winDuring, winAfter} {
		all := run.stats(win, "")
		label := ""
		if i == 0 {
			label = name
		}
		rows = append(rows, fmt.Sprintf("%-36s %-7s %6d %6.1f%% %8s %8s | %-22s | %-22s | %-22s",
			label, win, all.n, 100*all.errorRate, all.p99.Round(time.Millisecond), all.max.Round(time.Millisecond),
			run.stats(win, "read").short(), run.stats(win, "pg-read").short(), run.stats(win, "write").short()))
	}

	// Every failure, in every window, is a 503 with Retry-After and the clear message: never a
	// 500, never another status, never a dropped connection.
	bad := 0
	for _, s := range run.samples {
		if s.ok() {
			continue
		}
		if s.status == http.StatusServiceUnavailable && s.retryAfter != "" && strings.Contains(s.errText, unavailableMessage) {
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("%s request at %s (%s the fault): status %d (Retry-After %q): %.300s",
				s.class, s.start.Round(time.Millisecond), run.window(s), s.status, s.retryAfter, s.errText)
		}
	}
	if bad > 5 {
		t.Errorf("... and %d more failures that are not a 503 with a clear message", bad-5)
	}

	// Nothing fails before the fault.
	if ws := run.stats(winBefore, ""); ws.errs > 0 {
		t.Errorf("before the fault: %d of %d requests failed", ws.errs, ws.n)
	}
	// Reads of existing articles succeed throughout: a Redis fault falls back to PostgreSQL, and
	// with PostgreSQL gone they are served from Redis.
	if ws := run.stats("", "read"); ws.errs > 0 {
		t.Errorf("%d of %d article reads failed; %s", ws.errs, ws.n, run.failures("read"))
	}
	before, during, after := run.stats(winBefore, ""), run.stats(winDuring, ""), run.stats(winAfter, "")
	slack := 2 * before.p99 // how slow the machine is right now (-race, other processes)
	switch store {
	case "redis":
		// Redis is the speed, PostgreSQL the truth: nothing may fail, only get slower.
		if during.errs > 0 || after.errs > 0 {
			t.Errorf("requests failed while only Redis was faulty: %d during, %d after", during.errs, after.errs)
		}
		if limit := resSlowRedisCost + slack; during.p99 > limit {
			t.Errorf("p99 during the Redis fault is %s, want at most %s (%s over the p99 before it)", during.p99, limit, resSlowRedisCost)
		}
	case "postgres":
		// The fault must have been felt (else this tests nothing) ...
		if ws := run.stats(winDuring, "write"); ws.errs == 0 {
			t.Errorf("no write failed during the PostgreSQL fault: was it injected?")
		}
		// ... and the service recovers by itself: a PostgreSQL-backed request succeeds soon after
		// the fault cleared, and none started later than resRecoverWithin after it fails.
		var lastErr, firstOK time.Duration = -1, -1
		for _, s := range run.samples {
			if s.start < run.clear || s.class == "read" {
				continue
			}
			if !s.ok() && s.start-run.clear > lastErr {
				lastErr = s.start - run.clear
			}
			if s.ok() && (firstOK < 0 || s.end-run.clear < firstOK) {
				firstOK = s.end - run.clear
			}
		}
		recovery := fmt.Sprintf("first PostgreSQL-backed success %s after the fault cleared", firstOK.Round(time.Millisecond))
		if lastErr >= 0 {
			recovery += fmt.Sprintf(", last failure started %s after", lastErr.Round(time.Millisecond))
		} else {
			recovery += ", no failure after"
		}
		rows = append(rows, fmt.Sprintf("  %-36s recovery: %s", "", recovery))
		if limit := resRecoverWithin + slack; firstOK < 0 || firstOK > limit {
			t.Errorf("first PostgreSQL-backed success %s after the fault cleared, want within %s", firstOK, limit)
		}
		if limit := resRecoverWithin + slack; lastErr > limit {
			t.Errorf("a request started %s after the fault cleared still failed, want none after %s", lastErr, limit)
		}
	}
	return rows, w.checkWrites(t)
}

// checkWrites asserts that every acknowledged write is in PostgreSQL and that the counters are
// exact: the like rows, the counter row and what the API shows all agree.
func (w *resWorld) checkWrites(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	pool := w.app.DB.Pool // straight to PostgreSQL, not through the proxy
	w.mu.Lock()
	defer w.mu.Unlock()

	var found int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM comments WHERE id = ANY($1)`, w.comments).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found != len(w.comments) {
		t.Errorf("%d acknowledged comments are not in PostgreSQL (of %d)", len(w.comments)-found, len(w.comments))
	}

	uncertain, lost := 0, 0
	for key, st := range w.likes {
		if !st.certain {
			uncertain++
			continue
		}
		var liked bool
		err := pool.QueryRow(ctx, `SELECT COALESCE((SELECT liked FROM likes WHERE user_id = $1 AND biz = 'article' AND biz_id = $2), false)`,
			w.users[key.user].id, w.articles[key.article].id).Scan(&liked)
		if err != nil {
			t.Fatal(err)
		}
		if liked != st.want {
			if lost++; lost <= 3 {
				t.Errorf("%s's acknowledged like of %s is %v in PostgreSQL, want %v", w.users[key.user].name, w.articles[key.article].slug, liked, st.want)
			}
		}
	}
	if lost > 3 {
		t.Errorf("... %d acknowledged likes lost in all", lost)
	}

	var parts []string
	for ai, a := range w.articles {
		var rows, cnt int64
		if err := pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM likes WHERE biz = 'article' AND biz_id = $1 AND liked),
			COALESCE((SELECT sum(like_cnt)::bigint FROM interactives WHERE biz = 'article' AND biz_id = $1), 0)`, a.id).Scan(&rows, &cnt); err != nil {
			t.Fatal(err)
		}
		s, raw := w.send(time.Now(), "read", "GET", "/api/articles/"+a.slug, "", nil)
		if !s.ok() {
			t.Fatalf("GET %s after the fault: %d %s", a.slug, s.status, s.errText)
		}
		var out struct {
			Article struct {
				FavoritesCount int64 `json:"favoritesCount"`
			} `json:"article"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		api := out.Article.FavoritesCount
		parts = append(parts, fmt.Sprintf("%d/%d/%d", rows, cnt, api))
		if cnt != rows {
			t.Errorf("%s: like_cnt %d in PostgreSQL but %d liked rows", a.slug, cnt, rows)
		}
		if api != rows {
			// Say what the Redis hash holds and since when, to tell a hash never repaired (old TTL)
			// from one refilled with a stale value (fresh TTL).
			key := cache.NewCounters(nil, cache.Keyspace(w.app.Cfg.Redis.Prefix), cache.Policy{}, nil).Key(domain.BizArticle, a.id)
			rdb := testenv.NewRedisClient(t, nil)
			hash, _ := rdb.HGetAll(ctx, key).Result()
			ttl, _ := rdb.PTTL(ctx, key).Result()
			filled := time.Now().Add(ttl - cache.TTL) // no jitter: TTL = cache.TTL at the fill
			var ops []string
			for _, op := range w.history {
				if op.article == ai && op.at.After(filled.Add(-2*time.Second)) {
					ops = append(ops, fmt.Sprintf("%+dms user%d on=%v ok=%v", op.at.Sub(filled).Milliseconds(), op.user, op.on, op.ok))
				}
			}
			if len(ops) > 12 {
				ops = append([]string{"..."}, ops[len(ops)-12:]...)
			}
			t.Errorf("%s: the API shows favoritesCount %d, PostgreSQL has %d likes; Redis hash %v filled %s ago; likes around the fill: %v",
				a.slug, api, rows, hash, time.Since(filled).Round(time.Millisecond), ops)
		}
	}
	return fmt.Sprintf("likes rows/like_cnt/API per article %s; %d comments and %d likes acknowledged so far, %d likes of unknown outcome",
		strings.Join(parts, " "), len(w.comments), len(w.likes)-uncertain, uncertain)
}
