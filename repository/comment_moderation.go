package repository

import (
	"context"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// HideIn hides comment id in the caller's unit of work. Comments are not cached: the next list
// anywhere reads PostgreSQL and leaves it out (CommentService.List).
func (r *CommentRepository) HideIn(ctx context.Context, stx service.Tx, id int64, reason string) (domain.Comment, error) {
	row, err := r.q.CommentHide(ctx, pg.TxOf(stx), dao.CommentHideParams{ID: id, Reason: reason})
	if err != nil {
		return domain.Comment{}, pg.Wrapf(err, "hide comment %d", id)
	}
	return commentFromRow(row), nil
}

// UnhideIn shows comment id again, in the caller's unit of work.
func (r *CommentRepository) UnhideIn(ctx context.Context, stx service.Tx, id int64) (domain.Comment, error) {
	row, err := r.q.CommentUnhide(ctx, pg.TxOf(stx), id)
	if err != nil {
		return domain.Comment{}, pg.Wrapf(err, "unhide comment %d", id)
	}
	return commentFromRow(row), nil
}
