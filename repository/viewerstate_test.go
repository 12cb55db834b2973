package repository_test

import (
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Acceptance: the viewer's flags are cached (a second read runs no query) and exact right after
// each of the viewer's writes: like, unlike, collect, uncollect, folder delete, follow, unfollow.
func TestViewerState_ExactAfterEveryWrite(t *testing.T) {
	t.Parallel()
	c := setupCollections(t, testenv.NewDB(t))
	ctx := t.Context()
	viewer := createUser(t, c.users, userOpts{})
	author := createUser(t, c.users, userOpts{})
	a := createArticle(t, c.env, articleOpts{Author: author})
	ids := []int64{a.ID}

	type flags struct{ liked, collected, following bool }
	read := func(t *testing.T) flags {
		t.Helper()
		liked, err := c.inter.Liked(ctx, viewer.ID, domain.BizArticle, ids)
		if err != nil {
			t.Fatal(err)
		}
		collected, err := c.inter.Collected(ctx, viewer.ID, domain.BizArticle, ids)
		if err != nil {
			t.Fatal(err)
		}
		following, err := c.follows.FollowingAmong(ctx, viewer.ID, []int64{author.ID})
		if err != nil {
			t.Fatal(err)
		}
		return flags{liked[a.ID], collected[a.ID], following[author.ID]}
	}
	want := func(t *testing.T, step string, w flags) {
		t.Helper()
		if got := read(t); got != w {
			t.Fatalf("after %s: %+v, want %+v", step, got, w)
		}
		before := c.collected.Load()
		if got := read(t); got != w || c.collected.Load() != before {
			t.Fatalf("after %s, read again: %+v with %d collected queries, want %+v from the cache", step, got, c.collected.Load()-before, w)
		}
	}
	want(t, "nothing", flags{})
	c.like(t, a.ID, viewer.ID)
	want(t, "a like", flags{liked: true})
	folder := c.createCollection(t, collectionOpts{Owner: viewer})
	c.add(t, folder.ID, a.ID)
	want(t, "a collect", flags{liked: true, collected: true})
	if err := c.follows.Follow(ctx, viewer.ID, author.ID); err != nil {
		t.Fatal(err)
	}
	want(t, "a follow", flags{true, true, true})
	if _, err := c.cols.Remove(ctx, folder.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	want(t, "an uncollect", flags{liked: true, following: true})
	c.add(t, folder.ID, a.ID)
	want(t, "a collect again", flags{true, true, true})
	if err := c.cols.Delete(ctx, folder.ID); err != nil {
		t.Fatal(err)
	}
	want(t, "the folder's delete", flags{liked: true, following: true})
	c.unlike(t, a.ID, viewer.ID)
	want(t, "an unlike", flags{following: true})
	if err := c.follows.Unfollow(ctx, viewer.ID, author.ID); err != nil {
		t.Fatal(err)
	}
	want(t, "an unfollow", flags{})
}

// Acceptance (concurrent): one viewer likes and unlikes while readers read; once the writes are
// done, the cache says what PostgreSQL says.
func TestViewerState_ConcurrentLikesEndExact(t *testing.T) {
	t.Parallel()
	e := setup(t, testenv.NewDB(t), envOpts{})
	viewer := createUser(t, e.users, userOpts{})
	a := createArticle(t, e, articleOpts{})
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.inter.Liked(t.Context(), viewer.ID, domain.BizArticle, []int64{a.ID}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := range 25 {
				var err error
				if (i+w)%2 == 0 {
					err = e.inter.Like(t.Context(), domain.BizArticle, a.ID, viewer.ID)
				} else {
					err = e.inter.Unlike(t.Context(), domain.BizArticle, a.ID, viewer.ID)
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	truth, _ := e.likeRow(t, viewer.ID, a.ID)
	got, err := e.inter.Liked(t.Context(), viewer.ID, domain.BizArticle, []int64{a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got[a.ID] != truth {
		t.Fatalf("cached liked = %v, PostgreSQL says %v", got[a.ID], truth)
	}
}
