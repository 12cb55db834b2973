package repository_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// colEnv is a test env plus the collection repository and an InteractiveRepository whose querier
// counts the "collected among" lookups.
type colEnv struct {
	*env
	cols      *repository.CollectionRepository
	inter     *repository.InteractiveRepository
	collected *atomic.Int64 // CollectionItemCollectedAmong calls made through inter
}

// collectedCounter is the env's querier, counting the batched "which of these are collected" query.
type collectedCounter struct {
	dao.Querier
	calls *atomic.Int64
}

func (q collectedCounter) CollectionItemCollectedAmong(ctx context.Context, db dao.DBTX, arg dao.CollectionItemCollectedAmongParams) ([]int64, error) {
	q.calls.Add(1)
	return q.Querier.CollectionItemCollectedAmong(ctx, db, arg)
}

func setupCollections(t *testing.T, db *testenv.DB) colEnv {
	t.Helper()
	e := setup(t, db, envOpts{})
	calls := &atomic.Int64{}
	return colEnv{
		env:       e,
		cols:      repository.NewCollectionRepository(e.pool, e.q, e.counters, e.viewers),
		inter:     repository.NewInteractiveRepository(e.pool, collectedCounter{Querier: e.q, calls: calls}, e.counters, e.viewers),
		collected: calls,
	}
}

// collectionOpts are the fields of a folder to create; empty ones get unique defaults.
// folderCap is the per-owner cap the tests create under when the cap is not what they test.
const folderCap = 1000

type collectionOpts struct {
	Owner       domain.User // zero: a new user
	Name        string      // empty: unique
	Description string
}

func (c colEnv) createCollection(t *testing.T, o collectionOpts) domain.Collection {
	t.Helper()
	if o.Owner.ID == 0 {
		o.Owner = createUser(t, c.users, userOpts{})
	}
	if o.Name == "" {
		o.Name = "Folder " + testenv.RandomID(4)
	}
	col, err := c.cols.Create(t.Context(), domain.Collection{OwnerID: o.Owner.ID, Name: o.Name, Description: o.Description}, folderCap)
	if err != nil {
		t.Fatalf("create collection %q: %v", o.Name, err)
	}
	return col
}

func (c colEnv) add(t *testing.T, colID, articleID int64) bool {
	t.Helper()
	added, err := c.cols.Add(t.Context(), colID, articleID)
	if err != nil {
		t.Fatalf("Add(%d, %d): %v", colID, articleID, err)
	}
	return added
}

func (c colEnv) remove(t *testing.T, colID, articleID int64) bool {
	t.Helper()
	removed, err := c.cols.Remove(t.Context(), colID, articleID)
	if err != nil {
		t.Fatalf("Remove(%d, %d): %v", colID, articleID, err)
	}
	return removed
}

// fillCounters loads the articles' counters through the repository, which writes their hashes.
func (c colEnv) fillCounters(t *testing.T, ids ...int64) map[int64]domain.Counters {
	t.Helper()
	got, err := c.inter.Counters(t.Context(), domain.BizArticle, ids)
	if err != nil {
		t.Fatalf("Counters(%v): %v", ids, err)
	}
	for _, id := range ids {
		if _, ok := c.redisCollects(t, id); !ok {
			t.Fatalf("counter hash of %d not filled", id)
		}
	}
	return got
}

// pgCollects is the article's collect_cnt in PostgreSQL (0 without an interactives row).
func (c colEnv) pgCollects(t *testing.T, id int64) int64 {
	t.Helper()
	var n int64
	err := c.pool.QueryRow(context.Background(),
		"SELECT collect_cnt FROM interactives WHERE biz = 'article' AND biz_id = $1 AND shard = 0", id).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// redisCollects is the collect_cnt field of the article's hash; ok is false when it is absent.
func (c colEnv) redisCollects(t *testing.T, id int64) (n int64, ok bool) {
	t.Helper()
	s, err := c.rdb.HGet(context.Background(), c.counters.Key(domain.BizArticle, id), cache.FieldCollects).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if n, err = strconv.ParseInt(s, 10, 64); err != nil {
		t.Fatalf("collect_cnt %q: %v", s, err)
	}
	return n, true
}

// checkCollects asserts the article's collect count in PostgreSQL, in its Redis hash (which must
// exist) and from Counters, and that PostgreSQL's counter equals the number of items holding it.
func (c colEnv) checkCollects(t *testing.T, id, want int64) {
	t.Helper()
	if n := c.pgCollects(t, id); n != want {
		t.Errorf("article %d: PostgreSQL collect_cnt = %d, want %d", id, n, want)
	}
	if n := c.count(t, "SELECT count(*) FROM collection_items WHERE article_id = $1", id); n != want {
		t.Errorf("article %d: %d collection_items rows, want %d", id, n, want)
	}
	if n, ok := c.redisCollects(t, id); !ok || n != want {
		t.Errorf("article %d: Redis collect_cnt = %d (present %v), want %d", id, n, ok, want)
	}
	got, err := c.inter.Counters(t.Context(), domain.BizArticle, []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	if got[id].Collects != want {
		t.Errorf("article %d: Counters().Collects = %d, want %d", id, got[id].Collects, want)
	}
}

func itemIDs(items []domain.CollectionItem) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.ArticleID
	}
	return out
}

// Acceptance: folders are created, listed with their item counts, renamed and found; a name is
// unique per owner regardless of case, but two owners may use the same one.
func TestCollectionRepository_Folders(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("create, get, list with counts, update", func(t *testing.T) {
		t.Parallel()
		c := setupCollections(t, db)
		owner := createUser(t, c.users, userOpts{})
		first := c.createCollection(t, collectionOpts{Owner: owner, Name: "Reading list", Description: "later"})
		if first.ID == 0 || first.OwnerID != owner.ID || first.Name != "Reading list" || first.Description != "later" ||
			first.ArticleCount != 0 || first.CreatedAt.IsZero() || first.UpdatedAt.IsZero() {
			t.Fatalf("created %+v", first)
		}
		second := c.createCollection(t, collectionOpts{Owner: owner, Name: "Favourites"})
		c.createCollection(t, collectionOpts{Name: "Someone else's"})
		a1, a2 := createArticle(t, c.env, articleOpts{}), createArticle(t, c.env, articleOpts{})
		c.add(t, first.ID, a1.ID)
		c.add(t, first.ID, a2.ID)
		c.add(t, second.ID, a1.ID)

		got, err := c.cols.Get(t.Context(), first.ID)
		if err != nil || got.ID != first.ID || got.OwnerID != owner.ID || got.Name != first.Name {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		list, err := c.cols.ListByOwner(t.Context(), owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != first.ID || list[0].ArticleCount != 2 || list[1].ID != second.ID || list[1].ArticleCount != 1 {
			t.Fatalf("ListByOwner = %+v, want [first (2), second (1)] oldest first", list)
		}

		renamed, err := c.cols.Update(t.Context(), domain.Collection{ID: first.ID, OwnerID: owner.ID, Name: "To read", Description: "soon"})
		if err != nil {
			t.Fatal(err)
		}
		if renamed.Name != "To read" || renamed.Description != "soon" || renamed.UpdatedAt.Before(first.UpdatedAt) {
			t.Fatalf("Update = %+v", renamed)
		}
		// The answer to a rename reports the folder as it is, items included.
		if renamed.ArticleCount != 2 {
			t.Errorf("Update reports ArticleCount %d, want 2", renamed.ArticleCount)
		}
	})

	t.Run("names are unique per owner, case-insensitively", func(t *testing.T) {
		t.Parallel()
		c := setupCollections(t, db)
		owner, other := createUser(t, c.users, userOpts{}), createUser(t, c.users, userOpts{})
		c.createCollection(t, collectionOpts{Owner: owner, Name: "Go"})
		keep := c.createCollection(t, collectionOpts{Owner: owner, Name: "Rust"})
		if _, err := c.cols.Create(t.Context(), domain.Collection{OwnerID: owner.ID, Name: "GO"}, folderCap); !errors.Is(err, domain.ErrCollectionNameTaken) {
			t.Fatalf("duplicate Create error = %v, want ErrCollectionNameTaken", err)
		}
		if _, err := c.cols.Update(t.Context(), domain.Collection{ID: keep.ID, Name: "go"}); !errors.Is(err, domain.ErrCollectionNameTaken) {
			t.Fatalf("rename onto a taken name: error = %v, want ErrCollectionNameTaken", err)
		}
		if _, err := c.cols.Update(t.Context(), domain.Collection{ID: keep.ID, Name: "RUST"}); err != nil {
			t.Fatalf("changing the case of a folder's own name: %v", err)
		}
		c.createCollection(t, collectionOpts{Owner: other, Name: "Go"})
		if n := c.count(t, "SELECT count(*) FROM collections WHERE owner_id = $1", owner.ID); n != 2 {
			t.Fatalf("owner has %d folders, want 2", n)
		}
	})

	t.Run("concurrent creates at the cap: exactly the cap is kept", func(t *testing.T) {
		t.Parallel()
		c := setupCollections(t, db)
		owner, other := createUser(t, c.users, userOpts{}), createUser(t, c.users, userOpts{})
		const max, tries = 3, 12
		c.createCollection(t, collectionOpts{Owner: owner, Name: "Existing"})
		errs := make([]error, tries)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range tries {
			wg.Go(func() {
				<-start
				_, errs[i] = c.cols.Create(t.Context(), domain.Collection{OwnerID: owner.ID, Name: fmt.Sprintf("Race %d", i)}, max)
			})
		}
		close(start)
		wg.Wait()
		var created, refused int
		for _, err := range errs {
			switch {
			case err == nil:
				created++
			case errors.Is(err, domain.ErrCollectionLimit):
				refused++
			default:
				t.Fatalf("Create: %v", err)
			}
		}
		if created != max-1 || refused != tries-(max-1) {
			t.Fatalf("%d created and %d refused, want %d and %d", created, refused, max-1, tries-(max-1))
		}
		if n := c.count(t, "SELECT count(*) FROM collections WHERE owner_id = $1", owner.ID); n != max {
			t.Fatalf("owner has %d folders, want the cap %d", n, max)
		}
		// The cap is per owner.
		if _, err := c.cols.Create(t.Context(), domain.Collection{OwnerID: other.ID, Name: "Mine"}, max); err != nil {
			t.Fatalf("another owner's first folder: %v", err)
		}
	})

	t.Run("unknown folders and articles", func(t *testing.T) {
		t.Parallel()
		c := setupCollections(t, db)
		col := c.createCollection(t, collectionOpts{})
		a := createArticle(t, c.env, articleOpts{})
		if _, err := c.cols.Get(t.Context(), 1<<40); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Get(unknown) error = %v, want ErrNotFound", err)
		}
		if _, err := c.cols.Update(t.Context(), domain.Collection{ID: 1 << 40, Name: "x"}); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Update(unknown) error = %v, want ErrNotFound", err)
		}
		if _, err := c.cols.Add(t.Context(), 1<<40, a.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Add to an unknown folder: error = %v, want ErrNotFound", err)
		}
		if _, err := c.cols.Add(t.Context(), col.ID, 1<<40); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Add of an unknown article: error = %v, want ErrNotFound", err)
		}
		if c.pgCollects(t, a.ID) != 0 {
			t.Error("a failed Add moved the counter")
		}
	})
}

// Acceptance: Add and Remove are idempotent, and only a real change moves collect_cnt, in
// PostgreSQL and in the (filled) Redis hash alike.
func TestCollectionRepository_Items(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("add and remove are idempotent", func(t *testing.T) {
		t.Parallel()
		c := setupCollections(t, db)
		owner := createUser(t, c.users, userOpts{})
		col, other := c.createCollection(t, collectionOpts{Owner: owner}), c.createCollection(t, collectionOpts{Owner: owner})
		a := createArticle(t, c.env, articleOpts{})
		c.fillCounters(t, a.ID)

		steps := []struct {
			name    string
			do      func() bool
			changed bool
			want    int64
		}{
			{"add", func() bool { return c.add(t, col.ID, a.ID) }, true, 1},
			{"add again", func() bool { return c.add(t, col.ID, a.ID) }, false, 1},
			{"add to a second folder", func() bool { return c.add(t, other.ID, a.ID) }, true, 2},
			{"remove", func() bool { return c.remove(t, col.ID, a.ID) }, true, 1},
			{"remove again", func() bool { return c.remove(t, col.ID, a.ID) }, false, 1},
			{"remove from the second folder", func() bool { return c.remove(t, other.ID, a.ID) }, true, 0},
			{"remove what was never there", func() bool { return c.remove(t, other.ID, a.ID) }, false, 0},
		}
		for _, s := range steps {
			if got := s.do(); got != s.changed {
				t.Fatalf("%s reported a change: %v, want %v", s.name, got, s.changed)
			}
			c.checkCollects(t, a.ID, s.want)
			if t.Failed() {
				t.Fatalf("after %q", s.name)
			}
		}
	})

	t.Run("20 concurrent adds of one article into one folder count once", func(t *testing.T) {
		t.Parallel()
		c := setupCollections(t, db)
		col := c.createCollection(t, collectionOpts{})
		a := createArticle(t, c.env, articleOpts{})
		c.fillCounters(t, a.ID)
		const n = 20
		added, errs := make([]bool, n), make([]error, n)
		testenv.Together(n, func(i int) { added[i], errs[i] = c.cols.Add(t.Context(), col.ID, a.ID) })
		winners := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("add %d: %v", i, errs[i])
			}
			if added[i] {
				winners++
			}
		}
		if winners != 1 {
			t.Errorf("%d Adds reported adding, want exactly 1", winners)
		}
		c.checkCollects(t, a.ID, 1)
	})

	t.Run("items page newest first by keyset", func(t *testing.T) {
		t.Parallel()
		c := setupCollections(t, db)
		col, other := c.createCollection(t, collectionOpts{}), c.createCollection(t, collectionOpts{})
		var added []int64
		for range 5 {
			a := createArticle(t, c.env, articleOpts{})
			c.add(t, col.ID, a.ID)
			added = append(added, a.ID)
		}
		c.add(t, other.ID, added[0]) // another folder's items stay out
		want := slices.Clone(added)
		slices.Reverse(want)

		pages := c.pageAll(t, col.ID, 2)
		if !slices.Equal(pages.ids, want) || !slices.Equal(pages.sizes, []int{2, 2, 1}) {
			t.Fatalf("pages of 2 gave %v in pages %v; want %v in [2 2 1]", pages.ids, pages.sizes, want)
		}

		// Items added in one instant are ordered by article id and still each seen once.
		if _, err := c.pool.Exec(t.Context(), "UPDATE collection_items SET created_at = $2 WHERE collection_id = $1",
			col.ID, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		byID := slices.Clone(added)
		slices.Sort(byID)
		slices.Reverse(byID)
		if tied := c.pageAll(t, col.ID, 2); !slices.Equal(tied.ids, byID) {
			t.Fatalf("tied timestamps gave %v, want %v (article id descending)", tied.ids, byID)
		}
		if items, err := c.cols.Items(t.Context(), 1<<40, nil, 10); err != nil || len(items) != 0 {
			t.Fatalf("Items of an unknown folder = %v, %v; want none", items, err)
		}
	})
}

type pagedItems struct {
	ids   []int64
	sizes []int
}

// pageAll follows Items' keyset pages to the end.
func (c colEnv) pageAll(t *testing.T, colID int64, limit int) pagedItems {
	t.Helper()
	var out pagedItems
	var after *domain.Cursor
	for range 20 {
		items, err := c.cols.Items(t.Context(), colID, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			return out
		}
		out.ids = append(out.ids, itemIDs(items)...)
		out.sizes = append(out.sizes, len(items))
		last := items[len(items)-1]
		if last.AddedAt.IsZero() {
			t.Fatalf("item without AddedAt: %+v", last)
		}
		after = &domain.Cursor{CreatedAt: last.AddedAt, ID: last.ArticleID}
	}
	t.Fatal("paging does not end")
	return out
}

// Acceptance: deleting a folder removes it and its items and lowers the counter of every item in
// one transaction: while it waits, nothing of it shows; cancelled, nothing of it stays.
func TestCollectionRepository_DeleteIsOneTransaction(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t) // alone: it watches pg_stat_activity for a lock wait
	c := setupCollections(t, db)
	owner := createUser(t, c.users, userOpts{})
	col, keep := c.createCollection(t, collectionOpts{Owner: owner}), c.createCollection(t, collectionOpts{Owner: owner})
	arts := make([]domain.Article, 3)
	ids := make([]int64, len(arts))
	for i := range arts {
		arts[i] = createArticle(t, c.env, articleOpts{})
		ids[i] = arts[i].ID
	}
	c.fillCounters(t, ids...)
	for _, id := range ids {
		c.add(t, col.ID, id)
	}
	c.add(t, keep.ID, ids[0]) // counted twice: the other folder's item stays counted
	wantBefore := map[int64]int64{ids[0]: 2, ids[1]: 1, ids[2]: 1}
	checkAll := func(t *testing.T, want map[int64]int64) {
		t.Helper()
		for id, n := range want {
			c.checkCollects(t, id, n)
		}
	}
	checkAll(t, wantBefore)

	// Hold the counter row of the last item, so Delete stops part-way through.
	blocker, err := c.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback(context.Background()) }()
	if _, err := blocker.Exec(t.Context(), "SELECT 1 FROM interactives WHERE biz = 'article' AND biz_id = $1 FOR UPDATE", ids[2]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.cols.Delete(ctx, col.ID) }()
	testenv.WaitUntil(t, "Delete waits on the held counter row", func() bool {
		return c.count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%InteractiveAddCollects%'`) == 1
	})
	// Mid-way: from outside, the folder, its items and every counter are as before.
	if _, err := c.cols.Get(t.Context(), col.ID); err != nil {
		t.Fatalf("folder gone before Delete committed: %v", err)
	}
	if n := c.count(t, "SELECT count(*) FROM collection_items WHERE collection_id = $1", col.ID); n != 3 {
		t.Fatalf("%d items visible mid-Delete, want 3", n)
	}
	checkAll(t, wantBefore)

	cancel()
	if err := testenv.Recv(t, done, "the cancelled Delete"); err == nil {
		t.Fatal("Delete succeeded although cancelled while waiting")
	}
	if err := blocker.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Cancelled: all of it rolled back.
	if _, err := c.cols.Get(t.Context(), col.ID); err != nil {
		t.Fatalf("folder gone after a cancelled Delete: %v", err)
	}
	checkAll(t, wantBefore)

	if err := c.cols.Delete(t.Context(), col.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cols.Get(t.Context(), col.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
	checkAll(t, map[int64]int64{ids[0]: 1, ids[1]: 0, ids[2]: 0})
	if list, err := c.cols.ListByOwner(t.Context(), owner.ID); err != nil || len(list) != 1 || list[0].ID != keep.ID || list[0].ArticleCount != 1 {
		t.Fatalf("ListByOwner after Delete = %+v, %v", list, err)
	}
}

// Regression: an Add committing while Delete of its folder runs must not leave the counter
// raised for an item the folder's cascade removed. The Add is held open (as a slow Add would be)
// until Delete queues behind it.
func TestCollectionRepository_DeleteRacingAdd(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t) // alone: it watches pg_stat_activity for a lock wait
	c := setupCollections(t, db)
	col := c.createCollection(t, collectionOpts{})
	held, late := createArticle(t, c.env, articleOpts{}), createArticle(t, c.env, articleOpts{})
	c.add(t, col.ID, held.ID)

	// What Add does, in its own transaction, left uncommitted.
	tx, err := c.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	q := dao.New()
	if n, err := q.CollectionItemInsert(t.Context(), tx, dao.CollectionItemInsertParams{CollectionID: col.ID, ArticleID: late.ID}); err != nil || n != 1 {
		t.Fatalf("insert item: %d, %v", n, err)
	}
	if _, err := q.InteractiveAddCollects(t.Context(), tx, dao.InteractiveAddCollectsParams{Biz: string(domain.BizArticle), BizID: late.ID, Delta: 1}); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- c.cols.Delete(t.Context(), col.ID) }()
	testenv.WaitUntil(t, "Delete waits for the open Add", func() bool {
		return c.count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) == 1
	})
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, done, "Delete"); err != nil {
		t.Fatal(err)
	}
	for _, a := range []domain.Article{held, late} {
		items := c.count(t, "SELECT count(*) FROM collection_items WHERE article_id = $1", a.ID)
		if n := c.pgCollects(t, a.ID); items != 0 || n != 0 {
			t.Errorf("article %d after Delete: %d items, collect_cnt %d; want 0 and 0", a.ID, items, n)
		}
	}
}

// Acceptance: Collected answers for a whole page in one query, true only for articles in the
// user's own folders.
func TestInteractiveRepository_Collected(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	c := setupCollections(t, db)
	owner, other := createUser(t, c.users, userOpts{}), createUser(t, c.users, userOpts{})
	f1, f2 := c.createCollection(t, collectionOpts{Owner: owner}), c.createCollection(t, collectionOpts{Owner: owner})
	theirs := c.createCollection(t, collectionOpts{Owner: other})
	arts := make([]int64, 5)
	for i := range arts {
		arts[i] = createArticle(t, c.env, articleOpts{}).ID
	}
	c.add(t, f1.ID, arts[0])
	c.add(t, f2.ID, arts[1])
	c.add(t, f1.ID, arts[1]) // in two folders: still one flag
	c.add(t, theirs.ID, arts[2])
	c.add(t, f1.ID, arts[3])
	c.remove(t, f1.ID, arts[3]) // taken out again

	cases := []struct {
		name    string
		user    int64
		biz     domain.Biz
		ids     []int64
		want    map[int64]bool
		queries int64
	}{
		{"a page of five", owner.ID, domain.BizArticle, arts, map[int64]bool{arts[0]: true, arts[1]: true}, 1},
		{"the other user", other.ID, domain.BizArticle, arts, map[int64]bool{arts[2]: true}, 1},
		{"no ids", owner.ID, domain.BizArticle, nil, map[int64]bool{}, 0},
		{"anonymous", 0, domain.BizArticle, arts, map[int64]bool{}, 0},
		{"not an article", owner.ID, domain.Biz("comment"), arts, map[int64]bool{}, 0},
	}
	for _, tc := range cases {
		before := c.collected.Load()
		got, err := c.inter.Collected(t.Context(), tc.user, tc.biz, tc.ids)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		trues := map[int64]bool{}
		for id, v := range got {
			if v {
				trues[id] = true
			}
		}
		if len(trues) != len(tc.want) {
			t.Errorf("%s: Collected = %v, want %v", tc.name, got, tc.want)
		}
		for id := range tc.want {
			if !got[id] {
				t.Errorf("%s: Collected = %v, want %v", tc.name, got, tc.want)
			}
		}
		if q := c.collected.Load() - before; q != tc.queries {
			t.Errorf("%s: %d queries, want %d", tc.name, q, tc.queries)
		}
	}
}
