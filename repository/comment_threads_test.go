package repository_test

import (
	"errors"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Acceptance (issue #32): replies nest at most three deep, only under a live comment of the same
// article; deleting keeps a thread's shape; replies_count is exact under concurrent replies; one
// comment's replies page by id.
func TestCommentThreads(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	type fixture struct {
		e *env
		a domain.Article
		u domain.User
	}
	newFixture := func(t *testing.T) fixture {
		e := setup(t, db, envOpts{})
		return fixture{e: e, a: createArticle(t, e, articleOpts{}), u: createUser(t, e.users, userOpts{})}
	}
	add := func(t *testing.T, f fixture, parentID int64, body string) domain.Comment {
		t.Helper()
		c, err := f.e.comments.Create(t.Context(), domain.Comment{ArticleID: f.a.ID, AuthorID: f.u.ID, Body: body, ParentID: parentID})
		if err != nil {
			t.Fatalf("add %q under %d: %v", body, parentID, err)
		}
		return c
	}
	get := func(t *testing.T, f fixture, id int64) domain.Comment {
		t.Helper()
		c, err := f.e.comments.Get(t.Context(), id)
		if err != nil {
			t.Fatalf("get %d: %v", id, err)
		}
		return c
	}

	t.Run("depth is clamped at three", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		top := add(t, f, 0, "top")
		if top.Depth != 1 || top.ParentID != 0 || top.RootID != top.ID {
			t.Fatalf("top-level comment: %+v", top)
		}
		d2 := add(t, f, top.ID, "d2")
		d3 := add(t, f, d2.ID, "d3")
		d4 := add(t, f, d3.ID, "a reply to depth 3")
		if d2.Depth != 2 || d2.RootID != top.ID || d3.Depth != 3 || d3.ParentID != d2.ID || d3.RootID != top.ID {
			t.Fatalf("d2 %+v, d3 %+v", d2, d3)
		}
		if d4.Depth != 3 || d4.ParentID != d2.ID || d4.RootID != top.ID {
			t.Fatalf("a reply to a depth-3 comment: %+v, want a sibling of it under %d", d4, d2.ID)
		}
		if got := get(t, f, d2.ID).RepliesCount; got != 2 {
			t.Errorf("d2 repliesCount = %d, want 2", got)
		}
		if got := get(t, f, d3.ID).RepliesCount; got != 0 {
			t.Errorf("d3 repliesCount = %d, want 0", got)
		}
		if max := f.e.count(t, "SELECT max(depth) FROM comments WHERE article_id = $1", f.a.ID); max != 3 {
			t.Errorf("deepest = %d", max)
		}
	})

	t.Run("the parent must be a live comment of the same article", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		other := createArticle(t, f.e, articleOpts{})
		foreign, err := f.e.comments.Create(t.Context(), domain.Comment{ArticleID: other.ID, AuthorID: f.u.ID, Body: "elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		before := f.e.count(t, "SELECT count(*) FROM comments WHERE article_id = $1", f.a.ID)
		for name, parentID := range map[string]int64{"another article's": foreign.ID, "missing": 1 << 50} {
			_, err := f.e.comments.Create(t.Context(), domain.Comment{ArticleID: f.a.ID, AuthorID: f.u.ID, Body: "x", ParentID: parentID})
			var v *domain.ValidationError
			if !errors.As(err, &v) || len(v.Fields["parentId"]) == 0 {
				t.Errorf("%s parent: %v, want a parentId validation error", name, err)
			}
		}
		if after := f.e.count(t, "SELECT count(*) FROM comments WHERE article_id = $1", f.a.ID); after != before {
			t.Errorf("%d comments after refused replies, want %d", after, before)
		}
		if got := get(t, f, foreign.ID).RepliesCount; got != 0 {
			t.Errorf("the foreign comment's repliesCount = %d", got)
		}
		// The article's numbering has no gap left by the refusals.
		next := add(t, f, 0, "next")
		if next.Seq != before+1 {
			t.Errorf("next seq = %d, want %d", next.Seq, before+1)
		}
	})

	t.Run("a comment with replies becomes a placeholder, a leaf goes", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		top := add(t, f, 0, "top")
		reply := add(t, f, top.ID, "reply")
		leaf := add(t, f, 0, "leaf")

		if err := f.e.comments.Delete(t.Context(), leaf.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.e.comments.Get(t.Context(), leaf.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("deleted leaf: %v, want not found", err)
		}
		if err := f.e.comments.Delete(t.Context(), top.ID); err != nil {
			t.Fatal(err)
		}
		p := get(t, f, top.ID)
		if !p.Deleted || p.Body != "" || p.AuthorID != 0 || p.RepliesCount != 1 {
			t.Fatalf("placeholder: %+v", p)
		}
		if err := f.e.comments.Delete(t.Context(), top.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("deleting a placeholder again: %v, want not found", err)
		}
		if _, err := f.e.comments.Create(t.Context(), domain.Comment{ArticleID: f.a.ID, AuthorID: f.u.ID, Body: "x", ParentID: top.ID}); err == nil {
			t.Error("a reply to a placeholder was accepted")
		}
		if _, err := f.e.comments.Edit(t.Context(), top.ID, "back"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("editing a placeholder: %v, want not found", err)
		}
		// Its last reply gone, the placeholder has nothing to hold in place and goes too.
		if err := f.e.comments.Delete(t.Context(), reply.ID); err != nil {
			t.Fatal(err)
		}
		if n := f.e.count(t, "SELECT count(*) FROM comments WHERE article_id = $1", f.a.ID); n != 0 {
			t.Errorf("%d comments left, want 0", n)
		}
	})

	t.Run("edit marks the comment edited", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		c := add(t, f, 0, "first")
		if c.Edited {
			t.Fatal("a new comment is edited")
		}
		got, err := f.e.comments.Edit(t.Context(), c.ID, "second")
		if err != nil || got.Body != "second" || !got.Edited || got.Seq != c.Seq {
			t.Fatalf("edit: %+v, %v", got, err)
		}
		if _, err := f.e.comments.Edit(t.Context(), 1<<50, "x"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("editing a missing comment: %v", err)
		}
	})

	t.Run("repliesCount under concurrent replies and deletes", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		top := add(t, f, 0, "top")
		const n = 40
		victims := make([]domain.Comment, n/2)
		for i := range victims {
			victims[i] = add(t, f, top.ID, "to delete")
		}
		errs := make([]error, n)
		testenv.Together(n, func(i int) {
			if i%2 == 0 {
				errs[i] = f.e.comments.Delete(t.Context(), victims[i/2].ID)
				return
			}
			_, errs[i] = f.e.comments.Create(t.Context(), domain.Comment{ArticleID: f.a.ID, AuthorID: f.u.ID, Body: "r", ParentID: top.ID})
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
		}
		want := f.e.count(t, "SELECT count(*) FROM comments WHERE parent_id = $1", top.ID)
		if got := get(t, f, top.ID).RepliesCount; got != want || want != n/2 {
			t.Errorf("repliesCount = %d, %d replies stored, want %d", got, want, n/2)
		}
	})

	t.Run("a reply racing its parent's delete: a placeholder with the reply, or a refusal", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		for round := range 10 {
			parent := add(t, f, 0, "about to go")
			var replyErr, delErr error
			testenv.Together(2, func(i int) {
				if i == 0 {
					_, replyErr = f.e.comments.Create(t.Context(), domain.Comment{ArticleID: f.a.ID, AuthorID: f.u.ID, Body: "r", ParentID: parent.ID})
					return
				}
				delErr = f.e.comments.Delete(t.Context(), parent.ID)
			})
			if delErr != nil {
				t.Fatalf("round %d: delete: %v", round, delErr)
			}
			p, err := f.e.comments.Get(t.Context(), parent.ID)
			switch {
			case replyErr == nil && (err != nil || !p.Deleted || p.RepliesCount != 1):
				t.Fatalf("round %d: the reply landed, the parent is %+v, %v; want a placeholder with 1 reply", round, p, err)
			case replyErr != nil:
				var v *domain.ValidationError
				if !errors.As(replyErr, &v) || len(v.Fields["parentId"]) == 0 || !errors.Is(err, domain.ErrNotFound) {
					t.Fatalf("round %d: reply %v, parent %+v, %v; want a parentId refusal and the parent gone", round, replyErr, p, err)
				}
			}
		}
	})

	t.Run("replies page by id", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		top := add(t, f, 0, "top")
		var want []int64
		for range 5 {
			want = append(want, add(t, f, top.ID, "r").ID)
			add(t, f, 0, "noise")
		}
		nested := add(t, f, want[0], "nested") // a grandchild is not a direct reply
		var got []int64
		after := int64(0)
		for {
			page, err := f.e.comments.Replies(t.Context(), top.ID, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page {
				got = append(got, c.ID)
			}
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1].ID
		}
		if len(got) != len(want) {
			t.Fatalf("replies %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] || got[i] == nested.ID {
				t.Fatalf("replies %v, want %v", got, want)
			}
		}
	})

	t.Run("an erased account's answered comments stay as placeholders", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		victim := createUser(t, f.e.users, userOpts{Username: "threadvictim"})
		mine := func(parentID int64, body string) domain.Comment {
			c, err := f.e.comments.Create(t.Context(), domain.Comment{ArticleID: f.a.ID, AuthorID: victim.ID, Body: body, ParentID: parentID})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		answered := mine(0, "answered")
		reply := add(t, f, answered.ID, "an answer")
		leaf := mine(reply.ID, "a leaf")
		gone, err := erase(t.Context(), newEraser(t, f.e), f.e.pool, victim.Username, func(domain.User) {})
		if err != nil || gone.Comments != 2 {
			t.Fatalf("erase: %+v, %v; want 2 comments", gone, err)
		}
		if p := get(t, f, answered.ID); !p.Deleted || p.AuthorID != 0 || p.Body != "" || p.RepliesCount != 1 {
			t.Errorf("answered comment after the erasure: %+v", p)
		}
		if _, err := f.e.comments.Get(t.Context(), leaf.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("the leaf: %v, want gone", err)
		}
		if r := get(t, f, reply.ID); r.RepliesCount != 0 || r.Deleted {
			t.Errorf("the other user's reply: %+v", r)
		}
	})

	t.Run("an article's delete takes its threads", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		top := add(t, f, 0, "top")
		add(t, f, add(t, f, top.ID, "d2").ID, "d3")
		if _, err := f.e.pool.Exec(t.Context(), "DELETE FROM articles WHERE id = $1", f.a.ID); err != nil {
			t.Fatal(err)
		}
		if n := f.e.count(t, "SELECT count(*) FROM comments WHERE article_id = $1", f.a.ID); n != 0 {
			t.Errorf("%d comments left", n)
		}
	})
}
