package repository

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// fakeNumbering numbers comments per article like CommentInsertNumbered, failing a statement that
// holds a comment by author badAuthor; the first statement waits for release.
type fakeNumbering struct {
	mu      sync.Mutex
	last    map[int64]int64
	calls   [][]domain.Comment
	entered chan struct{}
	release chan struct{}
}

const badAuthor = 666

func (f *fakeNumbering) insert(ctx context.Context, articleID int64, cs []domain.Comment) ([]dao.Comment, error) {
	f.mu.Lock()
	first := len(f.calls) == 0
	f.calls = append(f.calls, cs)
	f.mu.Unlock()
	if first {
		close(f.entered)
		<-f.release
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		if c.AuthorID == badAuthor {
			return nil, errors.New("insert: foreign key violation")
		}
	}
	if articleID == 0 {
		return nil, nil // no counter row: the article is gone
	}
	rows := make([]dao.Comment, len(cs))
	for i, c := range cs {
		f.last[articleID]++
		rows[len(cs)-1-i] = dao.Comment{ID: f.last[articleID], ArticleID: articleID, Seq: f.last[articleID], AuthorID: pgtype.Int8{Int64: c.AuthorID, Valid: true}, Body: c.Body}
	}
	return rows, nil // in any order: the batcher sorts by seq
}

// queued waits until n comments on articleID are collecting behind the running batch.
func queued(b *commentBatcher, articleID int64, n int) {
	for {
		b.mu.Lock()
		got := 0
		if next := b.next[articleID]; next != nil {
			got = len(next.items)
		}
		b.mu.Unlock()
		if got == n {
			return
		}
		runtime.Gosched()
	}
}

// Comments arriving while a batch runs go into the next statement together, in arrival order;
// when that statement fails, each is retried alone, so only the bad one fails.
func TestCommentBatcher_GroupsWhileOneRuns(t *testing.T) {
	f := &fakeNumbering{last: map[int64]int64{}, entered: make(chan struct{}), release: make(chan struct{})}
	b := newCommentBatcher(f.insert)
	type answer struct {
		row dao.Comment
		err error
	}
	add := func(c domain.Comment) <-chan answer {
		ch, batcher := make(chan answer, 1), b
		go func() {
			row, err := batcher.add(t.Context(), c)
			ch <- answer{row, err}
		}()
		return ch
	}
	first := add(domain.Comment{ArticleID: 1, AuthorID: 1, Body: "first"})
	<-f.entered
	var next []<-chan answer
	for i, author := range []int64{2, 3, 4} {
		next = append(next, add(domain.Comment{ArticleID: 1, AuthorID: author, Body: "next"}))
		queued(b, 1, i+1)
	}
	other := add(domain.Comment{ArticleID: 2, AuthorID: 9, Body: "elsewhere"}) // another article: not held up
	if a := <-other; a.err != nil || a.row.Seq != 1 {
		t.Fatalf("comment on another article: %+v", a)
	}
	close(f.release)
	if a := <-first; a.err != nil || a.row.Seq != 1 {
		t.Fatalf("first: %+v", a)
	}
	for i, ch := range next {
		if a := <-ch; a.err != nil || a.row.Seq != int64(i+2) || a.row.AuthorID.Int64 != int64(i+2) {
			t.Fatalf("comment %d of the second batch: %+v, want seq %d by author %d", i, a, i+2, i+2)
		}
	}
	f.mu.Lock()
	if len(f.calls) != 3 || len(f.calls[1])+len(f.calls[2]) != 4 {
		t.Errorf("statements %v: want the first, the other article's, and one for the three that queued", f.calls)
	}
	f.mu.Unlock()

	// A failing statement of several: retried one by one.
	f2 := &fakeNumbering{last: map[int64]int64{}, entered: make(chan struct{}), release: make(chan struct{})}
	b = newCommentBatcher(f2.insert)
	first = add(domain.Comment{ArticleID: 1, AuthorID: 1})
	<-f2.entered
	good1 := add(domain.Comment{ArticleID: 1, AuthorID: 2})
	queued(b, 1, 1)
	bad := add(domain.Comment{ArticleID: 1, AuthorID: badAuthor})
	queued(b, 1, 2)
	good2 := add(domain.Comment{ArticleID: 1, AuthorID: 3})
	queued(b, 1, 3)
	close(f2.release)
	<-first
	if a := <-bad; a.err == nil {
		t.Errorf("the bad comment: %+v, want its error", a)
	}
	for i, ch := range []<-chan answer{good1, good2} {
		if a := <-ch; a.err != nil || a.row.Seq != int64(i+2) {
			t.Errorf("good comment %d beside the bad one: %+v, want seq %d", i, a, i+2)
		}
	}

	// An article without a counter: every comment of the batch is ErrNotFound.
	f3 := &fakeNumbering{last: map[int64]int64{}, entered: make(chan struct{}), release: make(chan struct{})}
	close(f3.release)
	b = newCommentBatcher(f3.insert)
	if a := <-add(domain.Comment{ArticleID: 0, AuthorID: 1}); !errors.Is(a.err, domain.ErrNotFound) {
		t.Errorf("comment on a deleted article: %v, want ErrNotFound", a.err)
	}
}
