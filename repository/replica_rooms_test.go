package repository_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/revisions"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/service"
)

// Profiles, comments and their replies, history, and the three searches read a replica when one
// has replayed enough, and a writer's own reads see their write through it. The router's lag
// bound is a minute, so the replica (500 ms behind) stays in the rotation however slow the
// machine: whether a read went to it is then a fact of the routing, not of timing.
func TestReplicaRouting_EveryRoomReadsTheReplica(t *testing.T) {
	t.Parallel()
	db := testenv.NewReplicatedDB(t)
	router := readRouter(t, db, time.Minute)
	testenv.WaitUntil(t, "the replica in the rotation", func() bool {
		before := router.Stats.Replica.Load()
		router.For(t.Context())
		return router.Stats.Replica.Load() > before
	})
	e := setup(t, &db.DB, envOpts{Reads: router})
	q := dao.New()
	revs := revisions.NewStore(db.Pool, q, router)
	people := search.NewPeople(db.Pool, q, router)
	tags := search.NewTags(db.Pool, q, router)
	articles := search.NewRepository(search.Pool{Pool: db.Pool}, search.Replicas{Lane: router.Lane(db.Pool, []*pgxpool.Pool{db.ReplicaPool})},
		q, search.Language("english"), e.articles, cache.NewSearchCache(e.rdb, e.ks), testenv.Logger(t))

	author := createUser(t, e.users, userOpts{Username: uniqueName("replicated")})
	tag := "replicated" + testenv.RandomID(4)
	a := createArticle(t, e, articleOpts{Author: author, Title: "Lighthouse keepers", Tags: []string{tag}})
	if _, err := e.articles.Update(t.Context(), a.ID, func(x *domain.Article) error { x.Title = "Lighthouse keepers, revised"; return nil }); err != nil {
		t.Fatal(err)
	}
	root, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: author.ID, Body: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: author.ID, Body: "a reply", ParentID: root.ID}); err != nil {
		t.Fatal(err)
	}
	db.WaitReplayed(t)
	terms, err := domain.ParseSearchQuery("lighthouse")
	if err != nil {
		t.Fatal(err)
	}

	reads := []struct {
		name string
		read func(ctx context.Context) (found bool, err error)
	}{
		{"profile", func(ctx context.Context) (bool, error) {
			// A miss with no tombstone: an invalidation's would send the fill to the primary.
			if err := e.rdb.Del(ctx, e.nameKey(author.Username)).Err(); err != nil {
				return false, err
			}
			u, err := e.users.GetByUsername(ctx, author.Username)
			return u.ID == author.ID, err
		}},
		{"authors of a page", func(ctx context.Context) (bool, error) {
			if err := e.rdb.Del(ctx, e.idKey(author.ID)).Err(); err != nil {
				return false, err
			}
			us, err := e.users.GetByIDs(ctx, []int64{author.ID})
			return len(us) == 1, err
		}},
		{"comments", func(ctx context.Context) (bool, error) {
			cs, err := e.comments.List(ctx, a.ID, 0, 10)
			return len(cs) == 2, err
		}},
		{"replies", func(ctx context.Context) (bool, error) {
			cs, err := e.comments.Replies(ctx, root.ID, 0, 10)
			return len(cs) == 1, err
		}},
		{"history", func(ctx context.Context) (bool, error) {
			rs, err := revs.List(ctx, a.ID, 0, 10)
			return len(rs) == 1, err
		}},
		{"a version", func(ctx context.Context) (bool, error) {
			r, err := revs.Get(ctx, a.ID, 1)
			return r.Title == "Lighthouse keepers", err
		}},
		{"people search", func(ctx context.Context) (bool, error) {
			ids, err := people.SearchUsers(ctx, author.Username, 5)
			return slices.Contains(ids, author.ID), err
		}},
		{"tag search", func(ctx context.Context) (bool, error) {
			got, err := tags.SearchTags(ctx, tag, 5)
			return slices.Contains(got, tag), err
		}},
		{"article search", func(ctx context.Context) (bool, error) {
			page, err := articles.Search(ctx, service.SearchQuery{Terms: terms, Tag: tag, Limit: 10})
			return len(page.Hits) == 1, err
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) { // not parallel: each counts the router's reads
			before := router.Stats.Replica.Load()
			found, err := r.read(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !found {
				t.Fatal("the read did not find what the replica has replayed")
			}
			if router.Stats.Replica.Load() == before {
				t.Fatal("the read did not go to the replica")
			}
		})
	}

	// The writer's next reads see their write although the replica has not replayed it yet.
	t.Run("read your writes", func(t *testing.T) {
		reply, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: author.ID, Body: "another reply", ParentID: root.ID})
		if err != nil {
			t.Fatal(err)
		}
		if err := router.Wrote(t.Context(), author.ID); err != nil {
			t.Fatal(err)
		}
		ctx := domain.WithReader(t.Context(), author.ID)
		cs, err := e.comments.Replies(ctx, root.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(cs, func(c domain.Comment) bool { return c.ID == reply.ID }) {
			t.Fatalf("the writer's own reply is missing from %d replies", len(cs))
		}
	})
}
