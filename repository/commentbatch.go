package repository

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// commentBatcher numbers and inserts the comments of one article that arrive while an earlier
// insert on that article is running as ONE statement (CommentInsertNumbered), committed once.
//
// Why: each article numbers its comments 1, 2, 3 … with no gaps, in commit order (a reader paging
// with after=<seq> never misses a comment that commits later with a lower number). That needs the
// article's counter row locked from the number's allocation to the commit, so commits on one
// article are serial, and each waits for the disk (milliseconds here). One commit per batch instead
// of per comment divides that wait by the batch's size; the guarantees stay as they were: a batch
// gets consecutive numbers and commits or fails as a whole.
//
// Per article at most one batch runs at a time in a process; comments arriving meanwhile join the
// next batch, which the finishing run starts. Instances batch on their own and queue on the row.
type commentBatcher struct {
	insert func(ctx context.Context, articleID int64, cs []domain.Comment) ([]dao.Comment, error)

	mu      sync.Mutex
	running map[int64]bool            // an article whose batch is being inserted
	next    map[int64]*commentBatchOf // the batch collecting behind it
}

// commentBatchOf is one statement's comments and, once done is closed, its outcome.
type commentBatchOf struct {
	items []domain.Comment
	done  chan struct{}
	rows  []dao.Comment // in the order of items
	errs  []error       // nil, or each item's error
}

// maxCommentBatch bounds one statement (bodies are up to 10,000 characters each).
const maxCommentBatch = 256

// commentBatchTimeout bounds one batch's statement, which runs detached from every caller's
// cancellation (it carries other callers' comments too).
const commentBatchTimeout = 10 * time.Second

func newCommentBatcher(insert func(ctx context.Context, articleID int64, cs []domain.Comment) ([]dao.Comment, error)) *commentBatcher {
	return &commentBatcher{insert: insert, running: map[int64]bool{}, next: map[int64]*commentBatchOf{}}
}

// add inserts c with the others arriving meanwhile and returns its row.
func (b *commentBatcher) add(ctx context.Context, c domain.Comment) (dao.Comment, error) {
	b.mu.Lock()
	batch := b.next[c.ArticleID]
	if batch != nil && len(batch.items) == maxCommentBatch {
		b.mu.Unlock() // the next batch is full: this one goes alone, queueing on the row
		rows, err := b.insert(ctx, c.ArticleID, []domain.Comment{c})
		return firstRow(rows, err)
	}
	if batch == nil {
		batch = &commentBatchOf{done: make(chan struct{})}
		b.next[c.ArticleID] = batch
	}
	i := len(batch.items)
	batch.items = append(batch.items, c)
	lead := !b.running[c.ArticleID]
	if lead {
		b.running[c.ArticleID] = true
		delete(b.next, c.ArticleID)
	}
	b.mu.Unlock()

	if lead {
		b.run(ctx, c.ArticleID, batch)
		// Comments that arrived while this batch ran are inserted by a run of their own, so this
		// caller answers now.
		go b.drain(ctx, c.ArticleID)
	}
	<-batch.done
	if batch.errs != nil && batch.errs[i] != nil {
		return dao.Comment{}, batch.errs[i]
	}
	return batch.rows[i], nil
}

// drain runs the batches that collected behind a finished one, until none is waiting.
func (b *commentBatcher) drain(ctx context.Context, articleID int64) {
	for {
		b.mu.Lock()
		batch := b.next[articleID]
		if batch == nil {
			delete(b.running, articleID)
			b.mu.Unlock()
			return
		}
		delete(b.next, articleID)
		b.mu.Unlock()
		b.run(ctx, articleID, batch)
	}
}

// run inserts one batch. When the statement fails for a batch of several, each comment is tried
// alone, so a comment that cannot be stored (its author was deleted meanwhile) fails only itself.
func (b *commentBatcher) run(ctx context.Context, articleID int64, batch *commentBatchOf) {
	defer close(batch.done)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commentBatchTimeout)
	defer cancel()
	n := len(batch.items)
	batch.rows, batch.errs = make([]dao.Comment, n), make([]error, n)
	rows, err := b.insert(sctx, articleID, batch.items)
	switch {
	case err == nil && len(rows) == 0: // one statement: all its rows or none
		for i := range batch.errs {
			batch.errs[i] = domain.ErrNotFound // the article was deleted meanwhile
		}
	case err == nil:
		// The statement numbered the comments in the order given, from one base.
		slices.SortFunc(rows, func(a, b dao.Comment) int { return cmp.Compare(a.Seq, b.Seq) })
		copy(batch.rows, rows)
	case n == 1:
		batch.errs[0] = err
	default:
		// Each on its own: a comment whose insert fails gets its error, the others their rows.
		for i, c := range batch.items {
			batch.rows[i], batch.errs[i] = firstRow(b.insert(sctx, articleID, []domain.Comment{c}))
		}
	}
}

func firstRow(rows []dao.Comment, err error) (dao.Comment, error) {
	if err != nil {
		return dao.Comment{}, err
	}
	if len(rows) == 0 {
		return dao.Comment{}, domain.ErrNotFound
	}
	return rows[0], nil
}
