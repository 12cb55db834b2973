package repository_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// hotPool is a pool large enough for the hot-item tests' clients to contend on PostgreSQL rather
// than on the pool.
func hotPool(t *testing.T, db *testenv.DB) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 16
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Acceptance (issue 14, hot writes): 64 clients × 200 mixed likes and unlikes of one article at
// once, half of them through a second repository with caches of its own (a second instance: its
// own batches of likes, racing the first's on the shards). Afterwards the like rows, the sum of
// the article's counter shards, the Redis hash and what Counters serves all equal the number of
// clients whose last action was a like.
func TestHotLikes_ExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{Pool: hotPool(t, db)})
	log := testenv.Logger(t)
	second := repository.NewInteractiveRepository(e.pool, dao.New(),
		cache.NewCounters(e.rdb, e.ks, testPolicy, log), cache.NewViewerState(e.rdb, e.ks, testPolicy, log))
	instance := func(i int) *repository.InteractiveRepository {
		if i%2 == 1 {
			return second
		}
		return e.inter
	}
	a := createArticle(t, e, articleOpts{})
	const clients, ops = 64, 200
	users := make([]domain.User, clients)
	for i := range users {
		users[i] = createUser(t, e.users, userOpts{})
	}
	if _, err := e.inter.Counters(t.Context(), domain.BizArticle, []int64{a.ID}); err != nil { // the hash exists
		t.Fatal(err)
	}

	liked := make([]bool, clients)
	errs := make([]error, clients)
	testenv.Together(clients, func(i int) {
		r := rand.New(rand.NewPCG(uint64(i), 14))
		for k := range ops {
			on := r.IntN(2) == 0
			var err error
			if on {
				err = instance(i).Like(context.Background(), domain.BizArticle, a.ID, users[i].ID)
			} else {
				err = instance(i).Unlike(context.Background(), domain.BizArticle, a.ID, users[i].ID)
			}
			if err != nil {
				errs[i] = err
				return
			}
			liked[i] = on
			if k%20 == 0 { // reads in between, served from the cache
				got, err := instance(i).Counters(context.Background(), domain.BizArticle, []int64{a.ID})
				if err != nil {
					errs[i] = err
					return
				}
				if n := got[a.ID].Likes; n < 0 || n > clients || (on && n == 0) {
					t.Errorf("client %d read %d likes right after its own %s", i, n, map[bool]string{true: "like", false: "unlike"}[on])
				}
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	var want int64
	for _, on := range liked {
		if on {
			want++
		}
	}
	rows := e.count(t, "SELECT count(*) FROM likes WHERE biz = 'article' AND biz_id = $1 AND liked", a.ID)
	shardSum := e.count(t, "SELECT coalesce(sum(like_cnt), 0)::bigint FROM interactives WHERE biz = 'article' AND biz_id = $1", a.ID)
	shards := e.count(t, "SELECT count(*) FROM interactives WHERE biz = 'article' AND biz_id = $1", a.ID)
	hash, err := e.rdb.HGet(t.Context(), e.counters.Key(domain.BizArticle, a.ID), cache.FieldLikes).Result()
	if err != nil {
		t.Fatalf("the article's hash: %v", err)
	}
	got, err := e.inter.Counters(t.Context(), domain.BizArticle, []int64{a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if rows != want || shardSum != want || hash != strconv.FormatInt(want, 10) || got[a.ID].Likes != want {
		t.Fatalf("clients liking at the end %d; like rows %d, sum of %d shards %d, Redis hash %s, Counters %d: want all equal",
			want, rows, shards, shardSum, hash, got[a.ID].Likes)
	}
	if shards < 2 {
		t.Errorf("%d counter rows: the likes were not spread over shards", shards)
	}
	t.Logf("%d clients × %d: %d liked at the end, over %d shard rows", clients, ops, want, shards)
}

// Acceptance (issue 14, hot writes): 64 clients × 50 comments on one article at once. Every
// comment gets its own id and seq, the seqs are exactly 1..3200, and the article's counter, the
// rows and the answers agree.
func TestHotComments_ExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{Pool: hotPool(t, db)})
	a := createArticle(t, e, articleOpts{})
	const clients, per = 64, 50
	authors := make([]domain.User, 8)
	for i := range authors {
		authors[i] = createUser(t, e.users, userOpts{})
	}
	got := make([][]domain.Comment, clients)
	errs := make([]error, clients)
	testenv.Together(clients, func(i int) {
		for k := range per {
			c, err := e.comments.Create(context.Background(), domain.Comment{
				ArticleID: a.ID, AuthorID: authors[i%len(authors)].ID, Body: "comment " + strconv.Itoa(i) + "/" + strconv.Itoa(k),
			})
			if err != nil {
				errs[i] = err
				return
			}
			got[i] = append(got[i], c)
		}
	})
	const n = clients * per
	ids, seqs := make(map[int64]bool, n), make([]int64, 0, n)
	for i := range clients {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		for k, c := range got[i] {
			if want := "comment " + strconv.Itoa(i) + "/" + strconv.Itoa(k); c.Body != want || c.ArticleID != a.ID {
				t.Fatalf("client %d got %+v for its comment %q", i, c, want)
			}
			if ids[c.ID] {
				t.Fatalf("id %d answered twice", c.ID)
			}
			ids[c.ID] = true
			seqs = append(seqs, c.Seq)
		}
		// One client's comments were created one after another: their numbers grow.
		if !slices.IsSortedFunc(got[i], func(x, y domain.Comment) int { return int(x.Seq - y.Seq) }) {
			t.Errorf("client %d's comments are not numbered in the order it made them", i)
		}
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("answered seqs are not exactly 1..%d: position %d holds %d", n, i, s)
		}
	}
	rows := e.count(t, "SELECT count(*) FROM comments WHERE article_id = $1", a.ID)
	distinct := e.count(t, "SELECT count(DISTINCT seq) FROM comments WHERE article_id = $1", a.ID)
	maxSeq := e.count(t, "SELECT coalesce(max(seq), 0) FROM comments WHERE article_id = $1", a.ID)
	last := e.count(t, "SELECT last_seq FROM article_comment_seqs WHERE article_id = $1", a.ID)
	if rows != n || distinct != n || maxSeq != n || last != n {
		t.Fatalf("rows %d, distinct seqs %d, max seq %d, last_seq %d: want %d each", rows, distinct, maxSeq, last, n)
	}
	listed, err := e.comments.List(t.Context(), a.ID, 0, n+1)
	if err != nil || len(listed) != n {
		t.Fatalf("List: %d comments, %v; want %d", len(listed), err, n)
	}
}
