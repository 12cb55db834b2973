package pg_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// These tests read through a real streaming replica that replays testenv.ReplicaDelay (500 ms)
// behind its primary (scripts/services.sh replica; make test starts it).

type routerEnv struct {
	db     *testenv.ReplicatedDB
	redis  *testenv.Redis
	router *pg.ReadRouter
}

type routerOpts struct {
	MaxLag  time.Duration  // zero: a second
	Replica *pgxpool.Pool  // nil: the replicated database's replica pool
	Redis   *testenv.Redis // nil: a Redis key prefix of the test's own
}

// startRouter starts a router (an instance's) over db and its replica, polling until the test
// ends; its write marks share Redis with every router given the same opts.Redis.
func startRouter(t testing.TB, db *testenv.ReplicatedDB, o routerOpts) *routerEnv {
	t.Helper()
	if o.MaxLag == 0 {
		o.MaxLag = time.Second
	}
	if o.Replica == nil {
		o.Replica = db.ReplicaPool
	}
	if o.Redis == nil {
		o.Redis = testenv.NewRedis(t)
	}
	marks := cache.NewWriteMarks(o.Redis.Client, cache.Keyspace(o.Redis.Prefix), o.MaxLag+time.Second, time.Now)
	router := pg.NewReadRouter(db.Pool, []pg.Replica{{Name: "replica 1", Pool: o.Replica}}, marks, o.MaxLag, time.Now, testenv.Logger(t))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { router.Run(ctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	return &routerEnv{db: db, redis: o.Redis, router: router}
}

// servedByReplica routes one read for ctx and reports whether it went to the replica.
func (e *routerEnv) servedByReplica(ctx context.Context) bool {
	before := e.router.Stats.Replica.Load()
	e.router.For(ctx)
	return e.router.Stats.Replica.Load() > before
}

func insertUser(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	name := "u" + testenv.RandomID(6)
	var id int64
	if err := pool.QueryRow(t.Context(), `INSERT INTO users (email, username, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
		name+"@example.com", name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// A user writes through one instance and reads through another at once, 200 times: every read
// sees its write, though the replica replays 500 ms behind (the mark goes through Redis). Once
// the replica has caught up, the reads go to it.
func TestReadRouter_ReadYourWritesOnAnotherInstance(t *testing.T) {
	t.Parallel()
	db := testenv.NewReplicatedDB(t)
	writer := startRouter(t, db, routerOpts{})
	reader := startRouter(t, db, routerOpts{Redis: writer.redis})
	testenv.WaitUntil(t, "the replica in the rotation", func() bool { return reader.servedByReplica(t.Context()) })

	const writes = 200
	ids := make([]int64, writes)
	for i := range writes {
		ids[i] = insertUser(t, db.Pool)
		if err := writer.router.Wrote(t.Context(), ids[i]); err != nil {
			t.Fatal(err)
		}
		ctx := domain.WithReader(t.Context(), ids[i])
		var n int
		if err := reader.router.For(ctx).QueryRow(ctx, `SELECT count(*) FROM users WHERE id = $1`, ids[i]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("write %d of %d: the user's read did not see it", i+1, writes)
		}
	}
	db.WaitReplayed(t)
	testenv.WaitUntil(t, "the writer's reads back on the replica once it has replayed the write",
		func() bool { return reader.servedByReplica(domain.WithReader(t.Context(), ids[writes-1])) })
	if reader.servedByReplica(domain.WithPrimaryReads(t.Context())) {
		t.Fatal("a read marked for the primary went to the replica")
	}
}

// Anonymous reads are never older than the lag bound: a read sees every row committed more than
// MaxLag before it began. With a bound above the replica's delay the replica serves some of them;
// with one below it, none while writes flow.
func TestReadRouter_AnonymousReadsWithinTheLagBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		maxLag      time.Duration
		wantReplica bool // the replica must serve a good share
	}{
		{"bound 1s above the 500ms delay", time.Second, true},
		{"bound 200ms below the 500ms delay", 200 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := testenv.NewReplicatedDB(t)
			e := startRouter(t, db, routerOpts{MaxLag: tc.maxLag})
			testenv.WaitUntil(t, "the replica in the rotation", func() bool { return e.servedByReplica(t.Context()) })

			type commit struct {
				id int64
				at time.Time // when the commit had returned
			}
			var commits []commit
			const rounds = 400
			for range rounds {
				id := insertUser(t, db.Pool)
				commits = append(commits, commit{id, time.Now()})
				began := time.Now()
				ctx := t.Context()
				var newest int64
				if err := e.router.For(ctx).QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM users`).Scan(&newest); err != nil {
					t.Fatal(err)
				}
				var due int64 // the newest row committed more than MaxLag before the read began
				for _, c := range commits {
					if c.at.Before(began.Add(-tc.maxLag)) {
						due = c.id
					}
				}
				if newest < due {
					t.Fatalf("a read saw rows up to %d, but %d had committed more than %s before it", newest, due, tc.maxLag)
				}
			}
			served := e.router.Stats.Replica.Load()
			if tc.wantReplica && served < rounds/10 {
				t.Fatalf("the replica served %d of %d reads; want a good share", served, rounds)
			}
			// With the bound below the delay the replica may still serve a read whenever no row was
			// committed within the bound (a slow machine spaces the writes out): the bound above is
			// the property, not where the reads went.
			t.Logf("the replica served %d of %d reads", served, rounds)
		})
	}
}

// The replica goes away in the middle of the reads (its server stops answering and refuses new
// connections): no read fails; they move to the primary.
func TestReadRouter_ReplicaStoppingCausesNoErrors(t *testing.T) {
	t.Parallel()
	db := testenv.NewReplicatedDB(t)
	u, err := url.Parse(db.ReplicaURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewCutProxy(t, u.Host)
	u.Host = proxy.Addr()
	pcfg := testenv.PoolConfig(t, u.String())
	pcfg.MaxConns = testenv.PoolMaxConns
	viaProxy, err := pgxpool.NewWithConfig(t.Context(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(viaProxy.Close)
	e := startRouter(t, db, routerOpts{Replica: viaProxy})
	testenv.WaitUntil(t, "the replica in the rotation", func() bool { return e.servedByReplica(t.Context()) })
	id := insertUser(t, db.Pool)
	db.WaitReplayed(t)

	const reads = 300
	for i := range reads {
		if i == reads/3 {
			proxy.Stop()
		}
		ctx := t.Context()
		var n int
		if err := e.router.For(ctx).QueryRow(ctx, `SELECT count(*) FROM users WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatalf("read %d (the replica stopped at %d): %v", i, reads/3, err)
		}
		if n != 1 {
			t.Fatalf("read %d: the row is missing", i)
		}
		rows, err := e.router.For(ctx).Query(ctx, `SELECT id FROM users WHERE id = $1`, id)
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	if e.router.Stats.Replica.Load() == 0 || e.router.Stats.Primary.Load() == 0 {
		t.Fatalf("replica %d, primary %d reads: want both (before and after the stop)", e.router.Stats.Replica.Load(), e.router.Stats.Primary.Load())
	}
}

// A lane (the search pools) reads its own pool on the replica, and when that pool fails the read,
// its own pool on the primary: its sessions' settings hold on either server, and the reader sees
// no error.
func TestReadRouter_LaneReadsItsOwnPools(t *testing.T) {
	t.Parallel()
	db := testenv.NewReplicatedDB(t)
	e := startRouter(t, db, routerOpts{MaxLag: time.Minute})
	testenv.WaitUntil(t, "the replica in the rotation", func() bool { return e.servedByReplica(t.Context()) })
	u, err := url.Parse(db.ReplicaURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewCutProxy(t, u.Host)
	u.Host = proxy.Addr()
	lane := e.router.Lane(namedPool(t, db.URL, "lane on the primary"), []*pgxpool.Pool{namedPool(t, u.String(), "lane on the replica")})

	appName := func() string {
		t.Helper()
		var name string
		if err := lane.For(t.Context()).QueryRow(t.Context(), `SELECT current_setting('application_name')`).Scan(&name); err != nil {
			t.Fatalf("a read through the lane: %v", err)
		}
		return name
	}
	if got := appName(); got != "lane on the replica" {
		t.Fatalf("read on %q, want the lane's replica pool", got)
	}
	proxy.Stop()
	if got := appName(); got != "lane on the primary" {
		t.Fatalf("after the replica pool failed, read on %q, want the lane's primary pool", got)
	}
	if e.router.Stats.Fallbacks.Load() == 0 {
		t.Fatal("the failed read was not counted as a fallback")
	}
}

// namedPool is a pool at url whose sessions carry application_name name.
func namedPool(t *testing.T, url, name string) *pgxpool.Pool {
	t.Helper()
	pcfg := testenv.PoolConfig(t, url)
	pcfg.MaxConns = 2
	pcfg.ConnConfig.RuntimeParams["application_name"] = name
	pool, err := pgxpool.NewWithConfig(t.Context(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
