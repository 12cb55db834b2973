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
func noCron(c *ioc.Config) { c.RankSchedule = "@every 24h" }

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
	t.Parallel()
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

func recvRankRun(t *testing.T, ch <-chan rankRunOutcome, what string) rankRunOutcome {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
}

// Two instances on one database and one Redis: whenever their ranking runs overlap, exactly one
// ranks and the other skips.
//
// Overlap is made certain rather than hoped for: before each round the test takes an ACCESS
// EXCLUSIVE lock on the articles table in a transaction of its own. Whichever instance wins the
// Redis lock then blocks in its first scan query, still holding the Redis lock, so the other one's
// TryLock necessarily finds the lock taken. Only the loser can return while the table is locked;
// the test waits for that first result (it must be skipped-not-leader) and only then lets the
// winner go on (it must succeed). No sleeps, no timing assumptions.
func TestHotList_TwoInstancesRankOneAtATime(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	apps := []*testApp{startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron)}

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
		if r := recvRankRun(t, results, "a run while the lock is held"); r.outcome != job.OutcomeNotLeader || r.err != nil {
			t.Fatalf("instance %d ran while another held the lock: %q, %v", r.instance, r.outcome, r.err)
		}
	}
	if err := held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}

	const rounds = 20
	wins := make([]int, len(apps))
	for round := range rounds {
		tx, err := db.Pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(t.Context(), "LOCK TABLE articles IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		results := runRanksTogether(t.Context(), apps...)
		loser := recvRankRun(t, results, "the losing run")
		if loser.outcome != job.OutcomeNotLeader || loser.err != nil {
			t.Fatalf("round %d: the first run to end (instance %d) = %q, %v; want skipped-not-leader", round, loser.instance, loser.outcome, loser.err)
		}
		if err := tx.Rollback(t.Context()); err != nil { // lets the winner's scan go on
			t.Fatal(err)
		}
		winner := recvRankRun(t, results, "the winning run")
		if winner.outcome != job.OutcomeSuccess || winner.err != nil {
			t.Fatalf("round %d: the winner (instance %d) = %q, %v; want success", round, winner.instance, winner.outcome, winner.err)
		}
		wins[winner.instance]++
	}
	t.Logf("wins per instance over %d rounds: %v", rounds, wins)

	var success, notLeader, failure int64
	for _, a := range apps {
		success += a.Wired.Rank.Metrics.Success.Load()
		notLeader += a.Wired.Rank.Metrics.NotLeader.Load()
		failure += a.Wired.Rank.Metrics.Failure.Load()
	}
	// Each round one success and one skip; the first phase added two skips.
	if success != rounds || notLeader != rounds+2 || failure != 0 {
		t.Fatalf("metrics across both instances: success %d, not leader %d, failure %d; want %d, %d, 0", success, notLeader, failure, rounds, rounds+2)
	}
	if n, err := rds.Client.Exists(t.Context(), rds.Prefix+"lock:job:rank").Result(); err != nil || n != 0 {
		t.Fatalf("the ranking lock is still held after the runs (%d, %v)", n, err)
	}

	// Both instances serve the same list, whichever ranked last.
	a, _ := hotArticles(t, apps[0].Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	b, _ := hotArticles(t, apps[1].Do("GET", "/api/articles/hot", "", nil).Expect(t, http.StatusOK))
	if !slices.Equal(hotSlugs(a), hotSlugs(b)) || len(a) != len(slugs) {
		t.Fatalf("the instances serve different hot lists: %v and %v", hotSlugs(a), hotSlugs(b))
	}
	if !slices.Equal(hotSlugs(a)[:2], []string{slugs[3], slugs[1]}) {
		t.Fatalf("the liked articles do not lead the list: %v", hotSlugs(a))
	}
}

// TestHotList_HidesWhatReadersMayNotSee: an article withdrawn, deleted or back to draft through
// one instance disappears from the hot list of every instance on the very next read, without
// waiting for the next ranking run; publishing it again brings it back.
func TestHotList_HidesWhatReadersMayNotSee(t *testing.T) {
	t.Parallel()
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
