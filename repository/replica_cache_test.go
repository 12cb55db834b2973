package repository_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// readRouter routes the reads of db over its replica (500 ms behind) with the lag bound maxLag,
// until the test ends.
func readRouter(t *testing.T, db *testenv.ReplicatedDB, maxLag time.Duration) *pg.ReadRouter {
	t.Helper()
	r := testenv.NewRedis(t)
	marks := cache.NewWriteMarks(r.Client, cache.Keyspace(r.Prefix), maxLag+time.Second, time.Now)
	router := pg.NewReadRouter(db.Pool, []pg.Replica{{Name: "replica 1", Pool: db.ReplicaPool}}, marks, maxLag, time.Now, testenv.Logger(t))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { router.Run(ctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	return router
}

// Cache fills that may read a replica 500 ms behind never store an article's old form: right
// after an edit, and right after a withdrawal, the anonymous reads that refill the entry (the
// edit left a tombstone, so the fill reads the primary) get the new form, while the replica
// itself still holds the old one; and they keep getting it until the replica has caught up.
func TestArticleCache_ReplicaFillsNeverStoreTheOldForm(t *testing.T) {
	t.Parallel()
	db := testenv.NewReplicatedDB(t)
	router := readRouter(t, db, time.Second)
	e := setup(t, &db.DB, envOpts{Reads: router})
	a := createArticle(t, e, articleOpts{Title: "First title"})
	db.WaitReplayed(t)
	testenv.WaitUntil(t, "the replica in the rotation", func() bool {
		before := router.Stats.Replica.Load()
		router.For(t.Context())
		return router.Stats.Replica.Load() > before
	})
	// A miss long after the last change (no tombstone): a replica may fill it.
	if err := e.rdb.Del(t.Context(), e.artCache.Key(a.Slug)).Err(); err != nil {
		t.Fatal(err)
	}
	before := router.Stats.Replica.Load()
	if got := e.getArticle(t, a.Slug); got.Title != "First title" {
		t.Fatalf("title %q", got.Title)
	}
	if router.Stats.Replica.Load() == before {
		t.Fatal("a fill of an untouched entry did not read the replica")
	}

	steps := []struct {
		name   string
		change func()
		check  func(domain.Article) bool
		old    string // what the replica still answers right after the change
	}{
		{"edit", func() {
			if _, err := e.articles.Update(t.Context(), a.ID, func(x *domain.Article) error { x.Title = "Second title"; return nil }); err != nil {
				t.Fatal(err)
			}
		}, func(x domain.Article) bool { return x.Title == "Second title" }, "First title"},
		{"withdrawal", func() {
			if _, err := e.articles.Transition(t.Context(), a.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
				t.Fatal(err)
			}
		}, func(x domain.Article) bool { return x.Status == domain.StatusWithdrawn }, string(domain.StatusPublished)},
	}
	for _, step := range steps {
		step.change()
		var onReplica string
		col := "title"
		if step.name == "withdrawal" {
			col = "status"
		}
		if err := db.ReplicaPool.QueryRow(t.Context(), `SELECT `+col+` FROM articles WHERE id = $1`, a.ID).Scan(&onReplica); err != nil {
			t.Fatal(err)
		}
		if onReplica != step.old {
			t.Fatalf("%s: the replica already has it (%q): the test's interleaving did not happen", step.name, onReplica)
		}
		for {
			replayed := replicaHas(t, db, col, a.ID, step.old)
			got := e.getArticle(t, a.Slug)
			if !step.check(got) {
				t.Fatalf("after the %s, a read got the old form: %+v", step.name, got)
			}
			if cached, ok := e.cachedArticle(t, a.Slug); ok && !step.check(domain.Article{Title: cached.Title, Status: cached.Status}) {
				t.Fatalf("after the %s, the cache holds the old form", step.name)
			}
			if replayed {
				break
			}
		}
	}
}

// replicaHas reports whether the replica no longer answers old for the article's col.
func replicaHas(t *testing.T, db *testenv.ReplicatedDB, col string, id int64, old string) bool {
	t.Helper()
	var v string
	if err := db.ReplicaPool.QueryRow(t.Context(), `SELECT `+col+` FROM articles WHERE id = $1`, id).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v != old
}
