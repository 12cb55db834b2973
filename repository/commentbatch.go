package repository

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// commentBatcher numbers and inserts the comments of one article that arrive while an earlier
// insert on that article is running as ONE statement (CommentInsertNumbered), committed once
// (keyedBatcher).
//
// Why: each article numbers its comments 1, 2, 3 … with no gaps, in commit order (a reader paging
// with after=<seq> never misses a comment that commits later with a lower number). That needs the
// article's counter row locked from the number's allocation to the commit, so commits on one
// article are serial, and each waits for the disk (milliseconds here). One commit per batch instead
// of per comment divides that wait by the batch's size; the guarantees stay as they were: a batch
// gets consecutive numbers and commits or fails as a whole.
type commentBatcher struct {
	*keyedBatcher[int64, domain.Comment, dao.Comment]
}

// maxCommentBatch bounds one statement (bodies are up to 10,000 characters each).
const maxCommentBatch = 256

// commentBatchTimeout bounds one batch's statement, which runs detached from every caller's
// cancellation (it carries other callers' comments too).
const commentBatchTimeout = 10 * time.Second

func newCommentBatcher(insert func(ctx context.Context, articleID int64, cs []domain.Comment) ([]dao.Comment, error)) *commentBatcher {
	return &commentBatcher{newKeyedBatcher(maxCommentBatch, commentBatchTimeout, func(ctx context.Context, articleID int64, cs []domain.Comment) ([]dao.Comment, []error) {
		return insertCommentBatch(ctx, insert, articleID, cs)
	})}
}

// add inserts c with the others arriving meanwhile and returns its row.
func (b *commentBatcher) add(ctx context.Context, c domain.Comment) (dao.Comment, error) {
	return b.keyedBatcher.add(ctx, c.ArticleID, c)
}

// insertCommentBatch inserts one batch. When the statement fails for a batch of several, each
// comment is tried alone, so a comment that cannot be stored (its author was deleted meanwhile)
// fails only itself.
func insertCommentBatch(ctx context.Context, insert func(ctx context.Context, articleID int64, cs []domain.Comment) ([]dao.Comment, error), articleID int64, cs []domain.Comment) ([]dao.Comment, []error) {
	n := len(cs)
	out, errs := make([]dao.Comment, n), make([]error, n)
	rows, err := insert(ctx, articleID, cs)
	switch {
	case err == nil && len(rows) == 0: // one statement: all its rows or none
		for i := range errs {
			errs[i] = domain.ErrNotFound // the article was deleted meanwhile
		}
	case err == nil:
		// The statement numbered the comments in the order given, from one base.
		slices.SortFunc(rows, func(a, b dao.Comment) int { return cmp.Compare(a.Seq, b.Seq) })
		copy(out, rows)
		return out, nil
	case n == 1:
		errs[0] = err
	default:
		// Each on its own: a comment whose insert fails gets its error, the others their rows.
		for i, c := range cs {
			out[i], errs[i] = firstRow(insert(ctx, articleID, []domain.Comment{c}))
		}
	}
	return out, errs
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
