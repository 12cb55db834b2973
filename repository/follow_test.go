package repository_test

import (
	"errors"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Acceptance: follow edges are idempotent, and an edge to a user that does not exist is
// domain.ErrNotFound (the foreign-key violation, translated).
func TestFollowRepository(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	edges := func(t *testing.T, e *env, follower, followee int64) int {
		t.Helper()
		var n int
		err := e.pool.QueryRow(t.Context(),
			"SELECT count(*) FROM follows WHERE follower_id = $1 AND followee_id = $2", follower, followee).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	isFollowing := func(t *testing.T, e *env, follower, followee int64) bool {
		t.Helper()
		ok, err := e.follows.IsFollowing(t.Context(), follower, followee)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	t.Run("follow twice is one edge", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a, b := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
		if isFollowing(t, e, a.ID, b.ID) {
			t.Fatal("following before Follow")
		}
		for i := range 2 {
			if err := e.follows.Follow(t.Context(), a.ID, b.ID); err != nil {
				t.Fatalf("Follow #%d: %v", i+1, err)
			}
		}
		if n := edges(t, e, a.ID, b.ID); n != 1 {
			t.Errorf("%d rows, want 1", n)
		}
		if !isFollowing(t, e, a.ID, b.ID) {
			t.Error("IsFollowing = false after Follow")
		}
		if isFollowing(t, e, b.ID, a.ID) {
			t.Error("following is not symmetric")
		}
	})

	t.Run("unfollow twice is fine", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a, b := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
		if err := e.follows.Follow(t.Context(), a.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := e.follows.Unfollow(t.Context(), a.ID, b.ID); err != nil {
				t.Fatalf("Unfollow #%d: %v", i+1, err)
			}
		}
		if isFollowing(t, e, a.ID, b.ID) || edges(t, e, a.ID, b.ID) != 0 {
			t.Error("edge survived Unfollow")
		}
	})

	t.Run("following a user that does not exist", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createUser(t, e.users, userOpts{})
		const missing = int64(1) << 60
		if err := e.follows.Follow(t.Context(), a.ID, missing); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("missing followee: err = %v, want ErrNotFound", err)
		}
		if err := e.follows.Follow(t.Context(), missing, a.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("missing follower: err = %v, want ErrNotFound", err)
		}
		if isFollowing(t, e, a.ID, missing) {
			t.Error("IsFollowing true for a missing user")
		}
	})

	t.Run("following oneself is refused", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createUser(t, e.users, userOpts{})
		if err := e.follows.Follow(t.Context(), a.ID, a.ID); err == nil {
			t.Error("self-follow accepted")
		}
		if edges(t, e, a.ID, a.ID) != 0 {
			t.Error("self-follow stored")
		}
	})
}
