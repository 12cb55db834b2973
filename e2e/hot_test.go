package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
)

// noCron keeps the scheduled ranking out of the way: the tests run passes themselves, with
// App.Rank.RunOnce. (The first scheduled run would come a day after start.)
func noCron(c *ioc.Config) { c.Jobs.RankSchedule = "@every 24h" }

// hotArticles returns the hot list's articles and count, checking the response's shape.
func hotArticles(t *testing.T, r response) ([]map[string]any, int) {
	t.Helper()
	m := r.JSON(t)
	if len(m) != 2 {
		t.Fatalf("hot list response has keys %v, want exactly articles and articlesCount: %s", hotKeys(m), r.Body)
	}
	list, n := articlesOf(t, r)
	if int(n) != len(list) {
		t.Fatalf("articlesCount %v, but %d articles", n, len(list))
	}
	return list, len(list)
}

func hotKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hotSlugs(list []map[string]any) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a["slug"].(string)
	}
	return out
}

// hotCase is one article of the end-to-end hot list: its likes through the API and how long ago
// it was published (set in PostgreSQL: the score falls with the hours since publishing).
type hotCase struct {
	title string
	likes int
	age   time.Duration
	draft bool
}

func TestHotList_EndToEnd(t *testing.T) {
	parallel(t)
	inProcess(t, "drives the ranking pass (Wired.Rank.RunOnce)")
	app := startApp(t, noCron)

	// Before any ranking pass: an empty list, not an error.
	list, n := hotArticles(t, app.Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	if n != 0 || list == nil {
		t.Fatalf("before any pass: %v", list)
	}

	authors := []string{app.Register("hotwriter1"), app.Register("hotwriter2")}
	likers := make([]string, 6)
	for i := range likers {
		likers[i] = app.Register(fmt.Sprintf("hotliker%d", i+1))
	}
	// Created in an order that is neither the expected one nor its reverse.
	cases := []hotCase{
		{title: "Loved yesterday", likes: 6, age: 22 * time.Hour},          // 5/24^1.5 ≈ 0.043
		{title: "Nobody likes it", likes: 0, age: 2 * time.Hour},           // -1/4^1.5 = -0.125
		{title: "Fresh and liked", likes: 3},                               // 2/2^1.5 ≈ 0.71
		{title: "A draft", likes: 0, draft: true},                          // never ranked
		{title: "Fresh and loved", likes: 6},                               // 5/2^1.5 ≈ 1.77
		{title: "Loved long ago", likes: 6, age: 8 * 24 * time.Hour},       // past the 7-day cutoff: not ranked
		{title: "Nobody liked it either", likes: 0, age: 30 * time.Minute}, // -1/2.5^1.5 ≈ -0.253
		{title: "Only one like", likes: 1, age: time.Hour},                 // 0
	}
	slugs := make([]string, len(cases))
	for i, c := range cases {
		body := newArticle(c.title, "hot")
		body["article"].(map[string]any)["draft"] = c.draft
		slugs[i] = articleOf(t, app.Do("POST", "/api/articles", authors[i%2], body).Expect(t, http.StatusCreated))["slug"].(string)
		for l := range c.likes {
			liked := articleOf(t, app.Do("POST", "/api/articles/"+slugs[i]+"/favorite", likers[l], nil).Expect(t, http.StatusOK))
			if liked["favoritesCount"] != float64(l+1) {
				t.Fatalf("%s: favoritesCount %v after %d likes", c.title, liked["favoritesCount"], l+1)
			}
		}
		if c.age > 0 {
			if _, err := app.DB.Pool.Exec(t.Context(), "UPDATE articles SET published_at = now() - $1::interval WHERE slug = $2",
				fmt.Sprintf("%d seconds", int(c.age.Seconds())), slugs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}

	outcome, err := app.Wired.Rank.RunOnce(t.Context())
	if err != nil || outcome != job.OutcomeSuccess {
		t.Fatalf("ranking pass: %q, %v", outcome, err)
	}
	rankedAt := time.Now()

	// The expected order and scores, from the formula and the publication times in PostgreSQL.
	type expected struct {
		slug  string
		likes int
		score float64
	}
	var want []expected
	for i, c := range cases {
		var published *time.Time
		if err := app.DB.Pool.QueryRow(t.Context(), "SELECT published_at FROM articles WHERE slug = $1", slugs[i]).Scan(&published); err != nil {
			t.Fatal(err)
		}
		if c.draft || c.age > 7*24*time.Hour {
			continue
		}
		want = append(want, expected{slugs[i], c.likes, domain.HotScore(int64(c.likes), domain.HoursSince(*published, rankedAt))})
	}
	slices.SortFunc(want, func(a, b expected) int { return -hotCmp(a.score, b.score) })
	wantSlugs := make([]string, len(want))
	for i, w := range want {
		wantSlugs[i] = w.slug
	}

	list, n = hotArticles(t, app.Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	if got := hotSlugs(list); !slices.Equal(got, wantSlugs) || n != len(wantSlugs) {
		t.Fatalf("hot list %v (articlesCount %d), want %v (by the formula)", got, n, wantSlugs)
	}
	if byHand := []string{slugs[4], slugs[2], slugs[0], slugs[7], slugs[1], slugs[6]}; !slices.Equal(wantSlugs, byHand) {
		t.Fatalf("the formula orders %v, the hand-computed scores %v", wantSlugs, byHand)
	}
	for i, a := range list {
		score, ok := a["score"].(float64)
		if !ok {
			t.Fatalf("article %s has no numeric score: %v", a["slug"], a)
		}
		// The pass ran on the wall clock a moment before rankedAt: allow for that moment.
		if math.Abs(score-want[i].score) > 0.01 {
			t.Fatalf("%s: score %v, want %.4f (formula)", a["slug"], score, want[i].score)
		}
		if i > 0 && score > list[i-1]["score"].(float64) {
			t.Fatalf("scores not descending at %d: %v after %v", i, score, list[i-1]["score"])
		}
		if a["favoritesCount"] != float64(want[i].likes) || a["favorited"] != false || a["author"] == nil || a["title"] == "" {
			t.Fatalf("hot article %v", a)
		}
		if _, ok := a["body"]; ok {
			t.Fatalf("hot list articles are summaries, but %s has a body", a["slug"])
		}
	}

	// A signed-in reader sees their own likes.
	list, _ = hotArticles(t, app.Do("GET", "/api/articles/hot", likers[2], nil).Expect(t, http.StatusOK))
	for _, a := range list {
		likedByThird := a["favoritesCount"].(float64) >= 3 // liker 3 liked every article with 3 or more likes
		if a["favorited"] != likedByThird {
			t.Fatalf("signed in as the third liker: %s favorited=%v, want %v", a["slug"], a["favorited"], likedByThird)
		}
	}

	// limit= cuts the list; out-of-range limits are rejected.
	list, n = hotArticles(t, app.Do("GET", "/api/articles/hot?limit=2", "", nil).Expect(t, http.StatusOK))
	if n != 2 || !slices.Equal(hotSlugs(list), wantSlugs[:2]) {
		t.Fatalf("limit=2: %v", hotSlugs(list))
	}
	for _, bad := range []string{"0", "101", "-1", "lots"} {
		res := app.Do("GET", "/api/articles/hot?limit="+bad, "", nil).Expect(t, http.StatusUnprocessableEntity)
		if _, ok := errorsOf(t, res)["limit"]; !ok {
			t.Fatalf("limit=%s: errors %s", bad, res.Body)
		}
	}
	if _, n := hotArticles(t, app.Do("GET", "/api/articles/hot?limit=100", "", nil).Expect(t, http.StatusOK)); n != len(want) {
		t.Fatalf("limit=100: %d articles, want %d", n, len(want))
	}
}

func hotCmp(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type rankRunOutcome struct {
	instance int
	outcome  job.Outcome
	err      error
}

// runBoth starts RunOnce on every app at the same moment and returns a channel of the results,
// in the order the runs end.
func runRanksTogether(ctx context.Context, apps ...*testApp) <-chan rankRunOutcome {
	out := make(chan rankRunOutcome, len(apps))
	var ready sync.WaitGroup
	start := make(chan struct{})
	ready.Add(len(apps))
	for i, a := range apps {
		go func() {
			ready.Done()
			<-start
			o, err := a.Wired.Rank.RunOnce(ctx)
			out <- rankRunOutcome{i, o, err}
		}()
	}
	ready.Wait()
	close(start)
	return out
}

// Two instances on one database and one Redis. While someone else holds the ranking lock, both
// skip. Then the instance that wins the lock ranks at every run, and the other never does while
// the first lives: neither when their runs overlap nor when it runs alone between the first's
// runs (the lock is kept, not released after each run). Once the first stops, the second takes
// over at its next run.
//
// Overlap is made certain rather than hoped for: for each round run together, the test takes an
// ACCESS EXCLUSIVE lock on the articles table in a transaction of its own. The instance holding
// the Redis lock then blocks in its first scan query, so the other one's TryLock necessarily runs
// while the holder is mid-run. Only the other can return while the table is locked; the test
// waits for that first result (it must be skipped-not-leader) and only then lets the holder go on
// (it must succeed). No sleeps, no timing assumptions.
func TestHotList_TwoInstancesRankOneAtATime(t *testing.T) {
	inProcess(t, "drives the ranking passes of two instances at once (Wired.Rank.RunOnce)")
	parallel(t)
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	apps := []*testApp{startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron)}
	lockKey := rds.Prefix + "lock:job:rank"

	// Some articles and likes, written through the first instance.
	author := apps[0].Register("twinauthor")
	fan := apps[1].Register("twinfan")
	var slugs []string
	for i := range 4 {
		s := articleOf(t, apps[0].Do("POST", "/api/articles", author, newArticle(fmt.Sprintf("Twin article %d", i))).Expect(t, http.StatusCreated))["slug"].(string)
		slugs = append(slugs, s)
		if i%2 == 1 {
			apps[1].Do("POST", "/api/articles/"+s+"/favorite", fan, nil).Expect(t, http.StatusOK)
		}
	}

	// While someone else holds the lock, both instances skip.
	locker := cache.NewLocker(rds.Client, cache.Keyspace(rds.Prefix))
	held, ok, err := locker.TryLock(t.Context(), "job:rank", time.Minute)
	if err != nil || !ok {
		t.Fatalf("take the ranking lock: ok=%v err=%v", ok, err)
	}
	results := runRanksTogether(t.Context(), apps...)
	for range apps {
		if r := testenv.Recv(t, results, "a run while the lock is held", 30*time.Second); r.outcome != job.OutcomeNotLeader || r.err != nil {
			t.Fatalf("instance %d ran while another held the lock: %q, %v", r.instance, r.outcome, r.err)
		}
	}
	if err := held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}

	const rounds = 20
	leader := -1
	for round := range rounds {
		tx, err := db.Pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(t.Context(), "LOCK TABLE articles IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		results := runRanksTogether(t.Context(), apps...)
		loser := testenv.Recv(t, results, "the losing run", 30*time.Second)
		if loser.outcome != job.OutcomeNotLeader || loser.err != nil {
			t.Fatalf("round %d: the first run to end (instance %d) = %q, %v; want skipped-not-leader", round, loser.instance, loser.outcome, loser.err)
		}
		if err := tx.Rollback(t.Context()); err != nil { // lets the holder's scan go on
			t.Fatal(err)
		}
		winner := testenv.Recv(t, results, "the winning run", 30*time.Second)
		if winner.outcome != job.OutcomeSuccess || winner.err != nil {
			t.Fatalf("round %d: the winner (instance %d) = %q, %v; want success", round, winner.instance, winner.outcome, winner.err)
		}
		if leader == -1 {
			leader = winner.instance
		}
		if winner.instance != leader {
			t.Fatalf("round %d: instance %d ranked, but instance %d won the lock in round 0 and still lives", round, winner.instance, leader)
		}
		// Between the holder's runs the lock stays taken: the other instance, running alone,
		// still skips.
		if o, err := apps[1-leader].Wired.Rank.RunOnce(t.Context()); o != job.OutcomeNotLeader || err != nil {
			t.Fatalf("round %d: instance %d alone, between the holder's runs = %q, %v; want skipped-not-leader", round, 1-leader, o, err)
		}
	}
	follower := 1 - leader
	lead, follow := apps[leader].Wired.Rank, apps[follower].Wired.Rank
	type counts struct{ success, notLeader, failure int64 }
	countsOf := func(j *job.RankJob) counts {
		return counts{j.Metrics.Success.Load(), j.Metrics.NotLeader.Load(), j.Metrics.Failure.Load()}
	}
	// The holder: every round a success (and one skip while the test held the lock); the other:
	// two skips per round, one more in the first phase, never a run.
	if got, want := countsOf(lead), (counts{rounds, 1, 0}); got != want {
		t.Fatalf("the holder's runs: %+v, want %+v", got, want)
	}
	if got, want := countsOf(follow), (counts{0, 2*rounds + 1, 0}); got != want {
		t.Fatalf("the other instance's runs: %+v, want %+v", got, want)
	}
	if !lead.Leader() || follow.Leader() {
		t.Fatalf("Leader(): holder %v, other %v", lead.Leader(), follow.Leader())
	}
	if d, err := rds.Client.PTTL(t.Context(), lockKey).Result(); err != nil || d <= 0 {
		t.Fatalf("between runs the ranking lock has PTTL %v (%v), want it held with a lease", d, err)
	}

	// Both instances serve the same list.
	a, _ := hotArticles(t, apps[0].Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	b, _ := hotArticles(t, apps[1].Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	if !slices.Equal(hotSlugs(a), hotSlugs(b)) || len(a) != len(slugs) {
		t.Fatalf("the instances serve different hot lists: %v and %v", hotSlugs(a), hotSlugs(b))
	}
	if !slices.Equal(hotSlugs(a)[:2], []string{slugs[3], slugs[1]}) {
		t.Fatalf("the liked articles do not lead the list: %v", hotSlugs(a))
	}

	// The holder shuts down: it gives the lock up, and the other instance ranks from its next run
	// on — the list it computes follows a like written after the holder stopped.
	apps[leader].Stop()
	if n, err := rds.Client.Exists(t.Context(), lockKey).Result(); err != nil || n != 0 {
		t.Fatalf("the ranking lock is still held after its holder shut down (%d, %v)", n, err)
	}
	apps[follower].Do("POST", "/api/articles/"+slugs[0]+"/favorite", fan, nil).Expect(t, http.StatusOK)
	apps[follower].Do("POST", "/api/articles/"+slugs[0]+"/favorite", apps[follower].Register("twinfan2"), nil).Expect(t, http.StatusOK)
	for run := range 2 {
		if o, err := follow.RunOnce(t.Context()); o != job.OutcomeSuccess || err != nil {
			t.Fatalf("takeover run %d: %q, %v; want success", run, o, err)
		}
	}
	if !follow.Leader() {
		t.Fatal("the instance that took over does not hold the lock")
	}
	after, _ := hotArticles(t, apps[follower].Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	if got := hotSlugs(after); len(got) != len(slugs) || got[0] != slugs[0] {
		t.Fatalf("after the takeover the hot list is %v, want %s (two likes since) first", got, slugs[0])
	}
}

// TestHotList_ColdStartWithRedisDown: an instance that starts while Redis is unreachable — no
// list in its process, none it can read from Redis — serves the last ranking, computed by another
// instance, from PostgreSQL's copy instead of a 503; the published check still applies to it.
func TestHotList_ColdStartWithRedisDown(t *testing.T) {
	inProcess(t, "drives the ranking pass (Wired.Rank.RunOnce)")
	parallel(t)
	if testenv.RedisMode() == ioc.RedisCluster {
		t.Skip("the fault proxy stands in front of one Redis server, not a cluster")
	}
	faults := testenv.NewFaults(t) // registered first: its proxy closes after the app has stopped
	redisProxy := faults.RedisProxy()
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	ranker := startReplica(t, db, rds.Prefix, noCron)

	author, fan := ranker.Register("coldauthor"), ranker.Register("coldfan")
	var slugs []string
	for i := range 3 {
		s := articleOf(t, ranker.Do("POST", "/api/articles", author, newArticle(fmt.Sprintf("Cold %d", i))).Expect(t, http.StatusCreated))["slug"].(string)
		slugs = append(slugs, s)
		if i > 0 {
			ranker.Do("POST", "/api/articles/"+s+"/favorite", fan, nil).Expect(t, http.StatusOK)
		}
	}
	if o, err := ranker.Wired.Rank.RunOnce(t.Context()); o != job.OutcomeSuccess || err != nil {
		t.Fatalf("ranking pass: %q, %v", o, err)
	}
	ranked, _ := hotArticles(t, ranker.Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	if len(ranked) != len(slugs) {
		t.Fatalf("ranked %v, want all of %v", hotSlugs(ranked), slugs)
	}

	redisProxy.Disable()
	cold := startReplica(t, db, rds.Prefix, noCron, func(c *ioc.Config) { c.Redis.URL = redisProxy.Rewrite(c.Redis.URL) })
	for read := range 2 { // the rebuilt list, then the copy the process kept of it
		got, _ := hotArticles(t, cold.Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
		if !slices.Equal(hotSlugs(got), hotSlugs(ranked)) {
			t.Fatalf("read %d: with Redis down from the start, the hot list is %v, want the last ranking %v", read, hotSlugs(got), hotSlugs(ranked))
		}
		for i, a := range got {
			if a["score"] != ranked[i]["score"] || a["favoritesCount"] != ranked[i]["favoritesCount"] || a["title"] != ranked[i]["title"] {
				t.Fatalf("read %d: %s as served from PostgreSQL %v, as ranked %v", read, a["slug"], a, ranked[i])
			}
		}
	}
	// The cold instance cannot rank (the lock lives in Redis) ...
	if o, err := cold.Wired.Rank.RunOnce(t.Context()); o != job.OutcomeFailure || err == nil {
		t.Fatalf("ranking with Redis down: %q, %v; want a failure", o, err)
	}
	// ... and an article withdrawn meanwhile leaves its list at once.
	ranker.Do("POST", "/api/articles/"+slugs[1]+"/withdraw", author, nil).Expect(t, http.StatusOK)
	want := slices.DeleteFunc(hotSlugs(ranked), func(s string) bool { return s == slugs[1] })
	got, _ := hotArticles(t, cold.Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	if !slices.Equal(hotSlugs(got), want) {
		t.Fatalf("after a withdraw the cold instance serves %v, want %v", hotSlugs(got), want)
	}
}

// TestHotList_HidesWhatReadersMayNotSee: an article withdrawn, deleted or back to draft through
// one instance disappears from the hot list of every instance on the very next read, without
// waiting for the next ranking run; publishing it again brings it back.
func TestHotList_HidesWhatReadersMayNotSee(t *testing.T) {
	inProcess(t, "drives the ranking pass (Wired.Rank.RunOnce)")
	parallel(t)
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	a, b := startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron)
	author, fan := a.Register("hideauthor"), b.Register("hidefan")
	var slugs []string
	for i := range 3 {
		s := articleOf(t, a.Do("POST", "/api/articles", author, newArticle(fmt.Sprintf("Hidden %d", i))).Expect(t, http.StatusCreated))["slug"].(string)
		slugs = append(slugs, s)
		b.Do("POST", "/api/articles/"+s+"/favorite", fan, nil).Expect(t, http.StatusOK)
	}
	if outcome, err := a.Wired.Rank.RunOnce(t.Context()); err != nil || outcome != job.OutcomeSuccess {
		t.Fatalf("ranking pass: %q, %v", outcome, err)
	}
	hotOn := func(app *testApp, token string) []string {
		t.Helper()
		list, _ := hotArticles(t, app.Do("GET", "/api/articles/hot", token, nil).Expect(t, http.StatusOK))
		got := hotSlugs(list)
		slices.Sort(got)
		return got
	}
	want := slices.Clone(slugs)
	slices.Sort(want)
	for _, app := range []*testApp{a, b} {
		if got := hotOn(app, ""); !slices.Equal(got, want) {
			t.Fatalf("hot list before any change = %v, want %v", got, want)
		}
	}

	a.Do("POST", "/api/articles/"+slugs[0]+"/withdraw", author, nil).Expect(t, http.StatusOK)
	a.Do("DELETE", "/api/articles/"+slugs[1], author, nil).Expect(t, http.StatusNoContent)
	for _, app := range []*testApp{b, a} {
		for _, token := range []string{"", fan, author} {
			if got := hotOn(app, token); !slices.Equal(got, []string{slugs[2]}) {
				t.Fatalf("hot list after withdraw and delete = %v, want only %s", got, slugs[2])
			}
		}
	}

	a.Do("POST", "/api/articles/"+slugs[0]+"/publish", author, nil).Expect(t, http.StatusOK)
	if got, want := hotOn(b, ""), []string{slugs[0], slugs[2]}; !slices.Equal(got, sortedCopy(want)) {
		t.Fatalf("hot list after re-publishing = %v, want %v", got, want)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
