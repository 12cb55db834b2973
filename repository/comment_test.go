package repository_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Acceptance: comments are numbered 1, 2, 3, ... per article with no gaps or duplicates however
// many are written at once, list by number (keyset), and vanish with their article.
func TestCommentRepository(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("50 concurrent creates are numbered 1..50", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		other := createArticle(t, e, articleOpts{})
		const n = 50
		authors := make([]domain.User, 5)
		for i := range authors {
			authors[i] = createUser(t, e.users, userOpts{})
		}
		got := make([]domain.Comment, n)
		errs := make([]error, n)
		testenv.Together(n, func(i int) {
			got[i], errs[i] = e.comments.Create(t.Context(), domain.Comment{
				ArticleID: a.ID, AuthorID: authors[i%len(authors)].ID, Body: "comment",
			})
		})
		seqs := make([]int64, 0, n)
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("create %d: %v", i, errs[i])
			}
			if got[i].ID == 0 || got[i].ArticleID != a.ID || got[i].CreatedAt.IsZero() {
				t.Fatalf("create %d returned %+v", i, got[i])
			}
			seqs = append(seqs, got[i].Seq)
		}
		slices.Sort(seqs)
		for i, s := range seqs {
			if s != int64(i+1) {
				t.Fatalf("sorted sequence numbers %v: want exactly 1..%d", seqs, n)
			}
		}
		if last := e.count(t, "SELECT last_seq FROM article_comment_seqs WHERE article_id = $1", a.ID); last != n {
			t.Errorf("last_seq = %d, want %d", last, n)
		}

		// Another article's numbering is its own.
		c, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: other.ID, AuthorID: authors[0].ID, Body: "first"})
		if err != nil || c.Seq != 1 {
			t.Fatalf("first comment on another article: %+v, %v; want seq 1", c, err)
		}
		next, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: authors[0].ID, Body: "51st"})
		if err != nil || next.Seq != n+1 {
			t.Fatalf("next comment: %+v, %v; want seq %d", next, err, n+1)
		}
	})

	t.Run("List pages by seq", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		u := createUser(t, e.users, userOpts{})
		const n = 7
		var created []domain.Comment
		for i := range n {
			c, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: u.ID, Body: string(rune('a' + i))})
			if err != nil {
				t.Fatal(err)
			}
			created = append(created, c)
		}
		// Comments of another article never show.
		if _, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: createArticle(t, e, articleOpts{}).ID, AuthorID: u.ID, Body: "elsewhere"}); err != nil {
			t.Fatal(err)
		}
		// Delete one in the middle: the keyset skips the hole, nothing else moves.
		if err := e.comments.Delete(t.Context(), created[3].ID); err != nil {
			t.Fatal(err)
		}
		want := slices.Delete(slices.Clone(created), 3, 4)

		var walked []domain.Comment
		after := int64(0)
		for pages := 0; ; pages++ {
			if pages > n {
				t.Fatalf("still paging after %d pages", pages)
			}
			page, err := e.comments.List(t.Context(), a.ID, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 2 {
				t.Fatalf("page of %d, limit 2", len(page))
			}
			walked = append(walked, page...)
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1].Seq
		}
		if len(walked) != len(want) {
			t.Fatalf("walked %d comments, want %d", len(walked), len(want))
		}
		for i := range want {
			if walked[i].ID != want[i].ID || walked[i].Seq != want[i].Seq || walked[i].Body != want[i].Body {
				t.Fatalf("comment %d: %+v, want %+v", i, walked[i], want[i])
			}
		}
		if rest, err := e.comments.List(t.Context(), a.ID, 5, 100); err != nil || len(rest) != 2 || rest[0].Seq != 6 {
			t.Errorf("List after seq 5: %+v, %v; want seqs 6 and 7", rest, err)
		}
	})

	t.Run("Get and Delete", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		c, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: a.AuthorID, Body: "mine"})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.comments.Get(t.Context(), c.ID); err != nil || got.Body != "mine" || got.Seq != 1 || got.AuthorID != a.AuthorID {
			t.Fatalf("Get: %+v, %v", got, err)
		}
		if err := e.comments.Delete(t.Context(), c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.comments.Get(t.Context(), c.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Get after Delete: err = %v, want ErrNotFound", err)
		}
		if err := e.comments.Delete(t.Context(), c.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Delete of a deleted comment: err = %v, want ErrNotFound", err)
		}
		if err := e.comments.Delete(t.Context(), 1<<60); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Delete of a missing id: err = %v, want ErrNotFound", err)
		}
		// A deleted comment's number is not handed out again.
		next, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: a.AuthorID, Body: "again"})
		if err != nil || next.Seq != 2 {
			t.Errorf("comment after a deletion: %+v, %v; want seq 2", next, err)
		}
	})

	t.Run("Create on a deleted article is ErrNotFound", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		if err := e.articles.Delete(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		_, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: a.AuthorID, Body: "too late"})
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		if n := e.count(t, "SELECT count(*) FROM comments WHERE article_id = $1", a.ID); n != 0 {
			t.Errorf("%d comments stored on a deleted article", n)
		}
	})

	t.Run("Create by a missing author is ErrNotFound and gives its number back", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		if _, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: 1 << 60, Body: "ghost"}); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		c, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: a.ID, AuthorID: a.AuthorID, Body: "real"})
		if err != nil || c.Seq != 1 {
			t.Fatalf("next comment: %+v, %v; want seq 1 (the failed insert rolled its number back)", c, err)
		}
	})
}
