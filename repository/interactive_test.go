package repository_test

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// pgLikes is the article's like count in PostgreSQL (the sum over its shard rows); ok is false
// when it has no interactives row.
func (e *env) pgLikes(t *testing.T, id int64) (n int64, ok bool) {
	t.Helper()
	var rows int64
	err := e.pool.QueryRow(context.Background(),
		"SELECT count(*), coalesce(sum(like_cnt), 0)::bigint FROM interactives WHERE biz = 'article' AND biz_id = $1", id).Scan(&rows, &n)
	if err != nil {
		t.Fatal(err)
	}
	return n, rows > 0
}

// likeRow is user's row in likes for the article; ok is false when there is none.
func (e *env) likeRow(t *testing.T, userID, id int64) (liked, ok bool) {
	t.Helper()
	err := e.pool.QueryRow(context.Background(),
		"SELECT liked FROM likes WHERE user_id = $1 AND biz = 'article' AND biz_id = $2", userID, id).Scan(&liked)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return liked, true
}

// redisLikes is the like_cnt field of the article's counter hash; ok is false when it is absent.
func (e *env) redisLikes(t *testing.T, id int64) (n int64, ok bool) {
	t.Helper()
	s, err := e.rdb.HGet(context.Background(), e.counters.Key(domain.BizArticle, id), cache.FieldLikes).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	n, err = strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("like_cnt %q: %v", s, err)
	}
	return n, true
}

func (e *env) countersOf(t *testing.T, ids ...int64) map[int64]domain.Counters {
	t.Helper()
	c, err := e.inter.Counters(t.Context(), domain.BizArticle, ids)
	if err != nil {
		t.Fatalf("Counters(%v): %v", ids, err)
	}
	return c
}

func (e *env) like(t *testing.T, id, userID int64) {
	t.Helper()
	if err := e.inter.Like(t.Context(), domain.BizArticle, id, userID); err != nil {
		t.Fatalf("Like(%d by %d): %v", id, userID, err)
	}
}

// dropCounters removes items' counter hashes, so that the next read misses.
func (e *env) dropCounters(t *testing.T, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if err := e.rdb.Del(t.Context(), e.counters.Key(domain.BizArticle, id)).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) unlike(t *testing.T, id, userID int64) {
	t.Helper()
	if err := e.inter.Unlike(t.Context(), domain.BizArticle, id, userID); err != nil {
		t.Fatalf("Unlike(%d by %d): %v", id, userID, err)
	}
}

// checkLikes asserts the article's like count in PostgreSQL, in the Redis hash and from Counters.
func (e *env) checkLikes(t *testing.T, id, want int64) {
	t.Helper()
	if n, _ := e.pgLikes(t, id); n != want {
		t.Errorf("PostgreSQL like_cnt = %d, want %d", n, want)
	}
	if n, ok := e.redisLikes(t, id); !ok || n != want {
		t.Errorf("Redis like_cnt = %d (present %v), want %d", n, ok, want)
	}
	if c := e.countersOf(t, id)[id]; c.Likes != want {
		t.Errorf("Counters().Likes = %d, want %d", c.Likes, want)
	}
}

// Acceptance: likes count once per user however they race, unliking what was never liked changes
// nothing, and PostgreSQL and the Redis counter hash agree.
func TestInteractiveRepository_Likes(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("50 users like at once", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		const n = 50
		users := make([]domain.User, n)
		for i := range users {
			users[i] = createUser(t, e.users, userOpts{})
		}
		// Fill the hash first, so every like goes through the increment-if-exists script.
		if c := e.countersOf(t, a.ID)[a.ID]; c != (domain.Counters{}) {
			t.Fatalf("counters before any like: %+v", c)
		}
		if n, ok := e.redisLikes(t, a.ID); !ok || n != 0 {
			t.Fatalf("hash not filled: like_cnt %d, present %v", n, ok)
		}
		loads := e.q.counterLoads.Load()
		errs := make([]error, n)
		testenv.Together(n, func(i int) { errs[i] = e.inter.Like(t.Context(), domain.BizArticle, a.ID, users[i].ID) })
		for i, err := range errs {
			if err != nil {
				t.Fatalf("like %d: %v", i, err)
			}
		}
		e.checkLikes(t, a.ID, n)
		if c := e.q.counterLoads.Load() - loads; c != 0 {
			t.Errorf("Counters after the likes loaded from PostgreSQL %d times, want 0 (the hash was kept current)", c)
		}
		if rows := e.count(t, "SELECT count(*) FROM likes WHERE biz = 'article' AND biz_id = $1 AND liked", a.ID); rows != n {
			t.Errorf("%d liked rows, want %d", rows, n)
		}
	})

	t.Run("one user likes 20 times at once, counted once", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		u := createUser(t, e.users, userOpts{})
		e.countersOf(t, a.ID)
		errs := make([]error, 20)
		testenv.Together(len(errs), func(i int) { errs[i] = e.inter.Like(t.Context(), domain.BizArticle, a.ID, u.ID) })
		for i, err := range errs {
			if err != nil {
				t.Fatalf("like %d: %v", i, err)
			}
		}
		e.checkLikes(t, a.ID, 1)
		e.like(t, a.ID, u.ID) // and once more, later
		e.checkLikes(t, a.ID, 1)
	})

	t.Run("Unlike of something never liked changes nothing", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		u := createUser(t, e.users, userOpts{})
		e.unlike(t, a.ID, u.ID)
		if _, ok := e.pgLikes(t, a.ID); ok {
			t.Error("Unlike created an interactives row")
		}
		if _, ok := e.likeRow(t, u.ID, a.ID); ok {
			t.Error("Unlike created a likes row")
		}
		e.countersOf(t, a.ID) // fills the hash with zeros
		e.checkLikes(t, a.ID, 0)
		e.unlike(t, a.ID, u.ID) // now with the hash in place
		e.checkLikes(t, a.ID, 0)
		if _, ok := e.pgLikes(t, a.ID); ok {
			t.Error("Unlike created an interactives row")
		}
		// With someone else's like counted, a stray Unlike does not take it away.
		e.like(t, a.ID, createUser(t, e.users, userOpts{}).ID)
		e.unlike(t, a.ID, u.ID)
		e.checkLikes(t, a.ID, 1)
	})

	t.Run("like, unlike, like again counts 1", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		u := createUser(t, e.users, userOpts{})
		e.countersOf(t, a.ID)
		e.like(t, a.ID, u.ID)
		e.checkLikes(t, a.ID, 1)
		e.unlike(t, a.ID, u.ID)
		e.checkLikes(t, a.ID, 0)
		if liked, ok := e.likeRow(t, u.ID, a.ID); !ok || liked {
			t.Fatalf("likes row after Unlike: present %v, liked %v; want kept with liked=false", ok, liked)
		}
		e.unlike(t, a.ID, u.ID) // a second Unlike must not go below zero
		e.checkLikes(t, a.ID, 0)
		e.like(t, a.ID, u.ID)
		e.checkLikes(t, a.ID, 1)
		if liked, ok := e.likeRow(t, u.ID, a.ID); !ok || !liked {
			t.Fatalf("likes row after liking again: present %v, liked %v", ok, liked)
		}
		if rows := e.count(t, "SELECT count(*) FROM likes WHERE user_id = $1", u.ID); rows != 1 {
			t.Errorf("%d likes rows for the user, want 1", rows)
		}
	})

	t.Run("Liked returns the flags of a batch", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		u, other := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
		arts := make([]int64, 4)
		for i := range arts {
			arts[i] = createArticle(t, e, articleOpts{}).ID
		}
		e.like(t, arts[0], u.ID)
		e.like(t, arts[2], u.ID)
		e.like(t, arts[3], u.ID)
		e.unlike(t, arts[3], u.ID)
		e.like(t, arts[1], other.ID)

		got, err := e.inter.Liked(t.Context(), u.ID, domain.BizArticle, append(arts, 1<<60))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int64]bool{arts[0]: true, arts[2]: true}; !maps.Equal(got, want) {
			t.Errorf("Liked = %v, want %v", got, want)
		}
		for _, tc := range []struct {
			name string
			user int64
			ids  []int64
		}{{"anonymous", 0, arts}, {"no ids", u.ID, nil}} {
			if got, err := e.inter.Liked(t.Context(), tc.user, domain.BizArticle, tc.ids); err != nil || len(got) != 0 {
				t.Errorf("%s: Liked = %v, %v; want empty", tc.name, got, err)
			}
		}
	})

	t.Run("an article with no interactives row has zero counters", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		fresh := createArticle(t, e, articleOpts{})
		liked := createArticle(t, e, articleOpts{})
		e.like(t, liked.ID, createUser(t, e.users, userOpts{}).ID)
		got := e.countersOf(t, fresh.ID, liked.ID, 1<<60)
		want := map[int64]domain.Counters{fresh.ID: {}, liked.ID: {Likes: 1}, 1 << 60: {}}
		if !maps.Equal(got, want) {
			t.Fatalf("Counters = %v, want %v", got, want)
		}
		if c := e.q.counterLoads.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads for one batch, want 1", c)
		}
		// The zeros are cached too: asking again costs nothing.
		if again := e.countersOf(t, fresh.ID, liked.ID, 1<<60); !maps.Equal(again, want) || e.q.counterLoads.Load() != 1 {
			t.Errorf("second Counters = %v with %d loads; want %v from Redis", again, e.q.counterLoads.Load(), want)
		}
		if got := e.countersOf(t); len(got) != 0 {
			t.Errorf("Counters of no ids = %v", got)
		}
	})

	t.Run("a batch half in Redis loads only the other half", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		cached, cold := createArticle(t, e, articleOpts{}), createArticle(t, e, articleOpts{})
		e.like(t, cold.ID, createUser(t, e.users, userOpts{}).ID)
		e.dropCounters(t, cold.ID) // the like stored its row: make the item cold again
		e.countersOf(t, cached.ID)
		// Change the cached item's count behind Redis's back: it must be served from the hash.
		if _, err := e.pool.Exec(t.Context(), "INSERT INTO interactives (biz, biz_id, like_cnt) VALUES ('article', $1, 99)", cached.ID); err != nil {
			t.Fatal(err)
		}
		got := e.countersOf(t, cached.ID, cold.ID)
		if want := map[int64]domain.Counters{cached.ID: {}, cold.ID: {Likes: 1}}; !maps.Equal(got, want) {
			t.Fatalf("Counters = %v, want %v", got, want)
		}
		if c := e.q.counterLoads.Load(); c != 2 {
			t.Errorf("%d PostgreSQL loads, want 2 (one per call with misses)", c)
		}
		if n, ok := e.redisLikes(t, cold.ID); !ok || n != 1 {
			t.Errorf("the loaded half was not written back: like_cnt %d, present %v", n, ok)
		}
	})
}

// Acceptance: with Redis down, counters come from PostgreSQL and likes still count there; the
// Redis errors are only logged.
func TestInteractiveRepository_RedisDown(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{DeadRedis: true})
	a := createArticle(t, e, articleOpts{})
	users := []domain.User{createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})}

	if c := e.countersOf(t, a.ID); c[a.ID] != (domain.Counters{}) {
		t.Fatalf("Counters before likes: %v", c)
	}
	for _, u := range users {
		e.like(t, a.ID, u.ID)
	}
	e.unlike(t, a.ID, users[1].ID)
	if n, _ := e.pgLikes(t, a.ID); n != 1 {
		t.Errorf("PostgreSQL like_cnt = %d, want 1", n)
	}
	if c := e.countersOf(t, a.ID)[a.ID]; c.Likes != 1 {
		t.Errorf("Counters().Likes = %d, want 1", c.Likes)
	}
	if c := e.q.counterLoads.Load(); c != 2 {
		t.Errorf("%d PostgreSQL loads, want 2 (every Counters call)", c)
	}
	if got, err := e.inter.Liked(t.Context(), users[0].ID, domain.BizArticle, []int64{a.ID}); err != nil || !got[a.ID] {
		t.Errorf("Liked = %v, %v", got, err)
	}
}
