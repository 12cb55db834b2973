package repository_test

import (
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Likes of one item that arrive while its statement runs go into the next statement together,
// in arrival order: a user who appears twice (a like and then an unlike that raced) has them
// applied one after the other, and when a statement of several fails, each is tried alone so only
// the bad one fails. Counts, cache and flags end exact.
func TestLikes_BatchWhileOneRuns(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	a := createArticle(t, e, articleOpts{})
	u1, u2, u3 := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
	ghost := createUser(t, e.users, userOpts{})
	if _, err := e.pool.Exec(t.Context(), "DELETE FROM users WHERE id = $1", ghost.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.inter.Counters(t.Context(), domain.BizArticle, []int64{a.ID}); err != nil { // the hash exists
		t.Fatal(err)
	}

	g := testenv.NewGate(t)
	e.q.likeGate = g
	set := func(userID int64, on bool) <-chan error {
		ch := make(chan error, 1)
		go func() {
			if on {
				ch <- e.inter.Like(context.Background(), domain.BizArticle, a.ID, userID)
			} else {
				ch <- e.inter.Unlike(context.Background(), domain.BizArticle, a.ID, userID)
			}
		}()
		return ch
	}
	first := set(u1.ID, true)
	<-g.Entered() // the first statement runs (held)
	queue := []struct {
		user int64
		on   bool
	}{{u2.ID, true}, {u3.ID, true}, {u2.ID, false}, {ghost.ID, true}}
	var answers []<-chan error
	for i, q := range queue {
		answers = append(answers, set(q.user, q.on))
		for e.inter.QueuedLikes(domain.BizArticle, a.ID) != i+1 {
			runtime.Gosched()
		}
	}
	g.Open()
	if err := <-first; err != nil {
		t.Fatalf("first like: %v", err)
	}
	for i, ch := range answers {
		err := <-ch
		if wantErr := queue[i].user == ghost.ID; (err != nil) != wantErr {
			t.Errorf("request %d (user %d, on %v): err %v, want an error: %v", i, queue[i].user, queue[i].on, err, wantErr)
		}
	}

	ids := func(v ...int64) []int64 { return append([]int64{}, v...) }
	want := [][2][]int64{
		{ids(u1.ID), ids()},                  // the first, alone
		{ids(u2.ID, u3.ID, ghost.ID), ids()}, // the three that queued with distinct users: fails
		{ids(u2.ID), ids()},                  // so each alone
		{ids(u3.ID), ids()},                  //
		{ids(ghost.ID), ids()},               // (fails again)
		{ids(), ids(u2.ID)},                  // u2's unlike, after its like
	}
	if got := e.q.likeStatements(); !reflect.DeepEqual(got, want) {
		t.Errorf("like statements (on, off users) =\n  %v\nwant\n  %v", got, want)
	}
	for _, c := range []struct {
		user int64
		want bool
	}{{u1.ID, true}, {u2.ID, false}, {u3.ID, true}} {
		if liked, _ := e.likeRow(t, c.user, a.ID); liked != c.want {
			t.Errorf("user %d's like row: %v, want %v", c.user, liked, c.want)
		}
		flags, err := e.inter.Liked(t.Context(), c.user, domain.BizArticle, []int64{a.ID})
		if err != nil || flags[a.ID] != c.want {
			t.Errorf("Liked for user %d: %v, %v; want %v", c.user, flags, err, c.want)
		}
	}
	if n, _ := e.pgLikes(t, a.ID); n != 2 {
		t.Errorf("PostgreSQL like count %d, want 2", n)
	}
	if n, ok := e.redisLikes(t, a.ID); !ok || n != 2 {
		t.Errorf("Redis like count %d (present %v), want 2", n, ok)
	}
}
