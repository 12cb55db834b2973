package e2e

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell"
	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/render"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/moderation"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
	sessionstore "github.com/inkwell-dev/inkwell/repository/session"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// pollLimit bounds every wait for the asynchronous read consumers.
const pollLimit = 20 * time.Second

// poll calls probe until it reports done, for at most pollLimit, and fails with the last value it
// saw. Each probe is an HTTP round trip or a query, which paces the loop; nothing sleeps.
func poll[T any](t *testing.T, what string, probe func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(pollLimit)
	for {
		v, done := probe()
		if done {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after %v; last value: %v", what, pollLimit, v)
		}
	}
}

// readsCounts are the readsCount of an author's published articles as the public list shows
// them. Listing records no read, so polling it does not move what it watches.
func (a *testApp) readsCounts(author string) map[string]float64 {
	a.T.Helper()
	list, _ := articlesOf(a.T, a.Do("GET", "/api/articles?limit=100&author="+author, "", nil).Expect(a.T, http.StatusOK))
	out := make(map[string]float64, len(list))
	for _, art := range list {
		out[art["slug"].(string)] = art["readsCount"].(float64)
	}
	return out
}

// pgReads is the article's read_cnt in PostgreSQL (0 without an interactives row).
func (a *testApp) pgReads(slug string) int64 {
	a.T.Helper()
	var n int64
	err := a.DB.Pool.QueryRow(context.Background(), `SELECT coalesce((SELECT i.read_cnt FROM interactives i
		JOIN articles ar ON ar.id = i.biz_id AND i.biz = 'article' WHERE ar.slug = $1 AND i.shard = 0), 0)`, slug).Scan(&n)
	if err != nil {
		a.T.Fatal(err)
	}
	return n
}

// streamLen is how many read events the app has published to its stream.
func (a *testApp) streamLen(t *testing.T) int64 {
	t.Helper()
	rds := testenv.NewRedis(t) // a client; its own (unused) prefix is cleaned up with the test
	n, err := rds.Client.XLen(context.Background(), cache.Keyspace(a.Cfg.Redis.Prefix).Key("stream", "reads")).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// history is the slugs of one page of the viewer's reading history and its nextCursor.
func (a *testApp) history(token, query string) ([]string, string) {
	a.T.Helper()
	got, _, next := slugsOf(a.T, a.Do("GET", "/api/user/history"+query, token, nil).Expect(a.T, http.StatusOK))
	return got, next
}

func TestReadsAreCounted(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("wordsmith")
	reader := app.Register("bookworm")
	slug := app.publish(author, "Read me")
	other := app.publish(author, "Read me too")
	draft := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Not yet", "description": "d", "body": "b", "draft": true,
	}}).Expect(t, http.StatusCreated))["slug"].(string)

	// The author reading their draft first: no event, so nothing to count, ever.
	for range 3 {
		app.Do("GET", "/api/articles/"+draft, author, nil).Expect(t, http.StatusOK)
	}
	// Then N reads of one article, anonymous and signed in, some at once; and one of another.
	const anonymous, signedIn = 4, 3
	var wg sync.WaitGroup
	statuses := make([]int, anonymous+signedIn)
	for i := range statuses {
		token := ""
		if i >= anonymous {
			token = reader
		}
		wg.Go(func() { statuses[i] = app.Do("GET", "/api/articles/"+slug, token, nil).Status })
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Fatalf("read %d: status %d", i, st)
		}
	}
	app.Do("GET", "/api/articles/"+other, author, nil).Expect(t, http.StatusOK) // the author's own read counts too

	const n = anonymous + signedIn
	counts := poll(t, fmt.Sprintf("readsCount of %s reaches %d", slug, n), func() (map[string]float64, bool) {
		c := app.readsCounts("wordsmith")
		return c, c[slug] >= n && c[other] >= 1
	})
	if counts[slug] != n || counts[other] != 1 {
		t.Fatalf("readsCount %v, want %s: %d and %s: 1", counts, slug, n, other)
	}
	// PostgreSQL, the truth, agrees; the draft has nothing; and only the reads made entries: the
	// reader's first read of the article (the repeats in one flush interval are tallied, at most one
	// entry a read), the anonymous reads in batches (at least one, at most one a read), and the
	// author's read of the other article.
	if got := app.pgReads(slug); got != n {
		t.Errorf("PostgreSQL read_cnt of %s = %d, want %d", slug, got, n)
	}
	if got := app.pgReads(draft); got != 0 {
		t.Errorf("PostgreSQL read_cnt of the draft = %d, want 0", got)
	}
	if got := app.streamLen(t); got < 3 || got > n+1 {
		t.Errorf("%d read entries on the stream, want 3..%d (drafts read by their author send none)", got, n+1)
	}
	if a := articleOf(t, app.Do("GET", "/api/articles/"+draft, author, nil).Expect(t, http.StatusOK)); a["readsCount"] != 0.0 {
		t.Errorf("the draft shows readsCount %v, want 0", a["readsCount"])
	}

	// Published, the former draft counts from then on.
	app.Do("POST", "/api/articles/"+draft+"/publish", author, nil).Expect(t, http.StatusOK)
	app.Do("GET", "/api/articles/"+draft, "", nil).Expect(t, http.StatusOK)
	poll(t, "the published draft's first read is counted", func() (float64, bool) {
		c := app.readsCounts("wordsmith")[draft]
		return c, c == 1
	})
}

// Anonymous reads wait in the instance's tally until a flush; stopping the instance flushes it
// (after its requests have drained), so no read it served is lost to a graceful stop. The flush
// interval is an hour here: only the stop can have sent them. Another instance on the same
// database and Redis prefix consumes the batch (reclaiming it if the stopping one had taken it).
func TestReadsTalliedBeforeAStopAreCounted(t *testing.T) {
	parallel(t)
	inProcess(t, "sets tuning constants through ioc.Config.Tune, which no setting carries to a process")
	hour := func(c *ioc.Config) { c.Tune.ReadTallyFlush = new(time.Hour) }
	first := startReplica(t, testenv.NewDB(t), testenv.NewRedis(t).Prefix, hour)
	author := first.Register("stopper")
	slug := first.publish(author, "Read before the stop")
	const reads = 25
	for range reads {
		first.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK)
	}
	if got := first.streamLen(t); got != 0 {
		t.Fatalf("%d read entries on the stream before the stop; the tally should hold them", got)
	}
	first.Stop()
	if got := first.streamLen(t); got != 1 {
		t.Fatalf("%d read entries on the stream after the stop, want 1 batch", got)
	}
	// The stopping instance's consumer may have taken the batch as it stopped (pending under its
	// name): the next instance reclaims it once idle, here after half a second.
	second := startReplica(t, first.DB, first.Cfg.Redis.Prefix, hour, func(c *ioc.Config) {
		c.Tune.ConsumerClaimIdle, c.Tune.ConsumerClaimEvery = new(500*time.Millisecond), new(100*time.Millisecond)
	})
	n := poll(t, "the stopped instance's reads are counted", func() (int64, bool) {
		n := second.pgReads(slug)
		return n, n >= reads
	})
	if n != reads {
		t.Fatalf("read_cnt %d, want %d", n, reads)
	}
}

func TestReadingHistory(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("novelist")
	reader := app.Register("devourer")
	bystander := app.Register("bystander")
	a, b, c := app.publish(author, "Chapter A"), app.publish(author, "Chapter B"), app.publish(author, "Chapter C")
	draft := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Chapter D", "description": "d", "body": "b", "draft": true,
	}}).Expect(t, http.StatusCreated))["slug"].(string)
	read := func(token, slug string) {
		t.Helper()
		app.Do("GET", "/api/articles/"+slug, token, nil).Expect(t, http.StatusOK)
	}
	historyIs := func(token string, want ...string) {
		t.Helper()
		poll(t, fmt.Sprintf("history becomes %v", want), func() ([]string, bool) {
			got, _ := app.history(token, "?limit=100")
			return got, slices.Equal(got, want)
		})
	}

	app.Do("GET", "/api/user/history", "", nil).Expect(t, http.StatusUnauthorized)
	if got, next := app.history(reader, ""); len(got) != 0 || next != "" {
		t.Fatalf("history before reading: %v %q", got, next)
	}

	// Anonymous reads and the author's read of a draft go first: once the reader's later reads
	// show, the consumer has applied these too.
	read("", c)
	read("", a)
	read(author, draft)
	read(reader, a)
	read(reader, b)
	read(reader, a)
	historyIs(reader, a, b) // A was read last; each article once

	read(reader, c)
	historyIs(reader, c, a, b)
	read(author, b)
	historyIs(author, b) // the draft the author read is not history
	if got, _ := app.history(bystander, ""); len(got) != 0 {
		t.Fatalf("bystander's history %v, want empty", got)
	}
	var anon int64
	if err := app.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM reading_history WHERE user_id = 0").Scan(&anon); err != nil || anon != 0 {
		t.Fatalf("%d anonymous history rows (%v), want 0", anon, err)
	}
	var rows int64
	if err := app.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM reading_history").Scan(&rows); err != nil || rows != 4 {
		t.Fatalf("%d history rows (%v), want 4: the reader's 3 and the author's 1", rows, err)
	}

	// Cursor paging: limit 2 over 3.
	page1, next := app.history(reader, "?limit=2")
	if !slices.Equal(page1, []string{c, a}) || next == "" {
		t.Fatalf("first page %v, cursor %q", page1, next)
	}
	page2, next2 := app.history(reader, "?limit=2&cursor="+next)
	if !slices.Equal(page2, []string{b}) || next2 != "" {
		t.Fatalf("second page %v, cursor %q", page2, next2)
	}
	app.Do("GET", "/api/user/history?cursor=garbage", reader, nil).Expect(t, http.StatusUnprocessableEntity)
	app.Do("GET", "/api/user/history?limit=0", reader, nil).Expect(t, http.StatusUnprocessableEntity)

	// A withdrawn article drops out of the reader's history, and returns when republished.
	app.Do("POST", "/api/articles/"+a+"/withdraw", author, nil).Expect(t, http.StatusOK)
	if got, _ := app.history(reader, ""); !slices.Equal(got, []string{c, b}) {
		t.Fatalf("history with A withdrawn: %v", got)
	}
	app.Do("POST", "/api/articles/"+a+"/publish", author, nil).Expect(t, http.StatusOK)
	if got, _ := app.history(reader, ""); !slices.Equal(got, []string{c, a, b}) {
		t.Fatalf("history with A republished: %v", got)
	}
}

// sqlLog is a pgx tracer that records every statement its pool sends: single queries, batched
// queries and COPYs.
type sqlLog struct {
	mu    sync.Mutex
	stmts []string
}

func (l *sqlLog) add(sql string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, sql)
}

// take returns what was recorded since the last take and starts afresh.
func (l *sqlLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.stmts
	l.stmts = nil
	return out
}

func (l *sqlLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.add(d.SQL)
	return ctx
}

func (l *sqlLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *sqlLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (l *sqlLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.add(d.SQL)
}

func (l *sqlLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (l *sqlLog) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	l.add("COPY " + d.TableName.Sanitize())
	return ctx
}

func (l *sqlLog) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

var (
	sqlComment   = regexp.MustCompile(`(?s)/\*.*?\*/|--[^\n]*`)
	writeKeyword = regexp.MustCompile(`(?i)\b(insert|update|delete|merge|upsert|truncate|copy|create|alter|drop|grant|lock)\b`)
)

// isPureRead reports whether sql is a SELECT (or a WITH … SELECT) that writes and locks nothing.
func isPureRead(sql string) bool {
	s := strings.TrimSpace(sqlComment.ReplaceAllString(sql, " "))
	words := strings.Fields(strings.ToLower(s))
	return len(words) > 0 && (words[0] == "select" || words[0] == "with") && !writeKeyword.MatchString(s)
}

// recordedReadEvents is a ReadRecorder that keeps what it was given, in place of the publisher.
type recordedReadEvents struct {
	mu  sync.Mutex
	evs []domain.ReadEvent
}

func (r *recordedReadEvents) Record(ev domain.ReadEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recordedReadEvents) take() []domain.ReadEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.evs
	r.evs = nil
	return out
}

// readStack is the service stack wired by hand over a traced pool, with no background workers but
// the article preloader: read events go to a recorder and nothing consumes them.
type readStack struct {
	t       *testing.T
	db      *testenv.DB
	url     string
	sql     *sqlLog
	reads   *recordedReadEvents
	rds     *testenv.Redis
	preload *job.Preloader
	client  *http.Client
}

func newReadStack(t *testing.T) *readStack {
	t.Helper()
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	log := testenv.Logger(t)
	cfg := ioc.Flags(flag.NewFlagSet("zero-writes", flag.ContinueOnError))
	cfg.Auth.JWTSecret = testJWTSecret

	pcfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	sql := &sqlLog{}
	pcfg.ConnConfig.Tracer = sql
	testenv.LimitPool(pcfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // before the database is dropped

	ks := cache.Keyspace(rds.Prefix)
	policy := cache.Policy{TTL: 10 * time.Minute, NullTTL: time.Minute, Jitter: time.Minute, LoadTimeout: 30 * time.Second}
	q := repository.NewQuerier()
	counters := cache.NewCounters(rds.Client, ks, policy, log)
	viewers := cache.NewViewerState(rds.Client, ks, policy, log)
	users := repository.NewUserRepository(pool, q, cache.NewUserCache(rds.Client, ks, policy, log), log, nil)
	lists := cache.NewListPageCache(rds.Client, ks, policy, log)
	follows := repository.NewFollowRepository(pool, q, viewers, lists, log)
	articles := repository.NewArticleRepository(pool, q, cache.NewArticleCache(rds.Client, ks, policy, render.New(), log),
		cache.NewAuthorPageCache(rds.Client, ks, policy), lists, cache.NewTagsCache(rds.Client, ks, policy, log), search.Language("english"), log, nil)
	preload := inkwell.NewArticlePreloader(articles, log) // as the server runs it
	pctx, stopPreloads := context.WithCancel(context.Background())
	preloadsStopped := make(chan error, 1)
	go func() { preloadsStopped <- preload.Run(pctx) }()
	t.Cleanup(func() { // before the Redis and database cleanups
		stopPreloads()
		if err := <-preloadsStopped; err != nil {
			t.Errorf("preloader: %v", err)
		}
	})
	inter := repository.NewInteractiveRepository(pool, q, counters, viewers)
	hasher, err := auth.NewHasher(inkwell.NewHasherConfig(cfg.Auth))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.NewJWTManager(inkwell.NewJWTConfig(cfg.Auth), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	reads := &recordedReadEvents{}
	sessions := service.NewSessionService(sessionstore.NewSessionRepository(pool, q), cache.NewRevocations(rds.Client, ks, nil), tokens,
		sessionstore.NewAPIKeyRepository(pool, q), service.SessionConfig{AccessTTL: time.Hour, RefreshTTL: time.Hour}, time.Now, time.After, log)
	idem := service.NewIdempotencyRunner(pg.NewUnitOfWork(pool), durable.NewIdempotencyStore(pool, q), 0)
	userSvc := service.NewUserService(users, pg.NewUnitOfWork(pool), hasher, sessions, idem, noVerification{}, nil, log, time.Now, repository.NewUploadReferences(pool, q))
	blocks := moderation.NewBlocks(pool, q, cache.NewBlocks(rds.Client, ks, policy, log), log)
	articleSvc := service.NewArticleService(articles, inter, users, follows, reads, inkwell.NewSlugSuffix(), idem, preload, blocks, repository.NewUploadReferences(pool, q), render.New())
	readSvc := service.NewReadService(repository.NewReadRepository(pool, q, counters), articleSvc)
	colSvc := service.NewCollectionService(repository.NewCollectionRepository(pool, q, counters, viewers), articleSvc)
	router := web.NewRouter(web.RouterConfig{MaxBodyBytes: 1 << 20}, log, web.Handlers{
		Auth:        web.NewAuthenticator(userSvc, log),
		Users:       web.NewUserHandler(userSvc, log),
		Profiles:    web.NewProfileHandler(service.NewProfileService(users, follows, blocks, pg.NewUnitOfWork(pool)), log),
		Articles:    web.NewArticleHandler(articleSvc, nil, log),
		Comments:    web.NewCommentHandler(service.NewCommentService(articles, repository.NewCommentRepository(pool, q, nil), users, follows, idem, blocks), log),
		Collections: web.NewCollectionHandler(colSvc, readSvc, log),
		Sessions:    web.NewSessionHandler(sessions, userSvc, log),
	})
	srv := httptest.NewServer(router)
	t.Cleanup(srv.Close)
	return &readStack{t: t, db: db, url: srv.URL, sql: sql, reads: reads, rds: rds, preload: preload, client: srv.Client()}
}

// app is a testApp view of the stack, for the shared request helpers.
func (s *readStack) app() *testApp { return &testApp{&apptest.App{T: s.t, URL: s.url, HTTP: s.client}} }

// coldCaches deletes every key the stack wrote to Redis (its own prefix only).
func (s *readStack) coldCaches(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := s.preload.Flush(ctx); err != nil { // no preload may write a key after this
		t.Fatal(err)
	}
	iter := s.rds.Client.Scan(ctx, 0, s.rds.Prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		if err := s.rds.Client.Del(ctx, iter.Val()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
}

// Acceptance: serving GET /api/articles/:slug writes nothing to PostgreSQL (only SELECTs, and
// none at all once the caches are warm), whoever reads and however cold the caches; the read
// is handed to the recorder instead.
func TestReadsZeroWritesOnRequestPath(t *testing.T) {
	parallel(t)
	inProcess(t, "wires the service stack by hand over a traced pool")
	s := newReadStack(t)
	app := s.app()
	author := app.Register("quill")
	reader := app.Register("glancer")
	slug := app.publish(author, "Zero writes")
	draft := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Zero writes draft", "description": "d", "body": "b", "draft": true,
	}}).Expect(t, http.StatusCreated))["slug"].(string)
	// The reader has collected and liked it, so every flag lookup runs.
	folder := app.createFolder(reader, "Kept")
	app.Do("POST", "/api/articles/"+slug+"/collect", reader, map[string]any{"collectionId": folderID(folder)}).Expect(t, http.StatusOK)
	app.Do("POST", "/api/articles/"+slug+"/favorite", reader, nil).Expect(t, http.StatusOK)
	if setup := s.sql.take(); !slices.ContainsFunc(setup, func(st string) bool { return !isPureRead(st) }) {
		t.Fatalf("the tracer saw no write among the %d statements that created users and articles: it is not wired", len(setup))
	}
	s.reads.take()

	var readerID int64
	cases := []struct {
		name, token, slug string
		cold              bool
		event             bool // a read event is recorded
	}{
		{"anonymous, cold caches", "", slug, true, true},
		{"anonymous, warm caches", "", slug, false, true},
		{"signed in, cold caches", reader, slug, true, true},
		{"signed in, warm caches", reader, slug, false, true},
		{"the author's draft, cold caches", author, draft, true, false},
		{"the author's draft, warm caches", author, draft, false, false},
	}
	for _, tc := range cases {
		if tc.cold {
			s.coldCaches(t)
		}
		s.sql.take()
		got := articleOf(t, app.Do("GET", "/api/articles/"+tc.slug, tc.token, nil).Expect(t, http.StatusOK))
		stmts := s.sql.take()
		for _, st := range stmts {
			if !isPureRead(st) {
				t.Errorf("%s: the request path sent a statement that is not a pure read:\n%s", tc.name, st)
			}
		}
		if tc.cold && len(stmts) == 0 {
			t.Errorf("%s: no statement at all with cold caches; is the tracer wired?", tc.name)
		}
		t.Logf("%s: %d statements", tc.name, len(stmts))
		if tc.token == reader && (got["collected"] != true || got["favorited"] != true || got["collectsCount"] != 1.0) {
			t.Errorf("%s: flags %v", tc.name, got)
		}

		evs := s.reads.take()
		if !tc.event {
			if len(evs) != 0 {
				t.Errorf("%s: %d read events, want none", tc.name, len(evs))
			}
			continue
		}
		if len(evs) != 1 {
			t.Fatalf("%s: %d read events recorded, want 1", tc.name, len(evs))
		}
		ev := evs[0]
		if tc.token == reader {
			if readerID == 0 {
				readerID = ev.UserID
			}
			if ev.UserID == 0 || ev.UserID != readerID {
				t.Errorf("%s: event user %d, want the reader", tc.name, ev.UserID)
			}
		} else if ev.UserID != 0 {
			t.Errorf("%s: event user %d, want 0 (anonymous)", tc.name, ev.UserID)
		}
		// An anonymous read only counts (the recorder names its batch); a signed-in one feeds
		// the history, which needs its id and time.
		if ev.ArticleID == 0 || ev.UserID != 0 && (ev.ID == "" || ev.At.IsZero()) {
			t.Errorf("%s: incomplete event %+v", tc.name, ev)
		}
	}
	// Nothing consumed the events: the counter never moved (asked on the untraced pool).
	var reads int64
	if err := s.db.Pool.QueryRow(context.Background(), "SELECT coalesce(sum(read_cnt), 0)::bigint FROM interactives").Scan(&reads); err != nil || reads != 0 {
		t.Fatalf("read_cnt = %d (%v), want 0: no consumer runs", reads, err)
	}
}

func TestZeroWritesClassifier(t *testing.T) {
	parallel(t)
	cases := map[string]bool{
		"-- name: ArticleGetBySlug :one\nSELECT * FROM articles WHERE slug = $1": true,
		"WITH x AS (SELECT 1) SELECT * FROM x":                                   true,
		"  select 1":                                                             true,
		"SELECT updated_at FROM articles":                                        true,
		"-- name: X :exec\nINSERT INTO t VALUES (1)":                             false,
		"WITH gone AS (DELETE FROM t RETURNING id) SELECT id FROM gone":          false,
		"SELECT id FROM collections WHERE id = $1 FOR UPDATE":                    false,
		"UPDATE t SET a = 1":                                                     false,
		"begin":                                                                  false,
		"COPY \"t\"":                                                             false,
	}
	for sql, want := range cases {
		if got := isPureRead(sql); got != want {
			t.Errorf("isPureRead(%q) = %v, want %v", sql, got, want)
		}
	}
}

// noVerification issues no verification code.
type noVerification struct{}

func (noVerification) IssueVerificationIn(context.Context, service.Tx, domain.User) error { return nil }
