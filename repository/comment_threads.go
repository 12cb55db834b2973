package repository

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// Threaded comments (issue #32): replies, placeholders, edits. Comments are not cached: every
// instance reads PostgreSQL on the next request, so a reply, an edit or a delete committed on one
// instance shows on all of them at once.

// insertReply stores reply c (c.ParentID set) in tx.
func (r *CommentRepository) insertReply(ctx context.Context, tx *pg.Tx, c domain.Comment) (domain.Comment, error) {
	row, err := r.insertReplyRow(ctx, tx, c)
	if err != nil {
		return domain.Comment{}, err
	}
	return commentFromRow(row), nil
}

// insertReplyRow locks the parent c names (so it cannot be deleted, nor its replies_count move,
// until this commits), places the reply (domain.PlaceReply: same article, at most three deep; a
// reply to a depth-3 comment locks that comment's parent instead) and inserts it numbered. The
// parent's replies_count moves by the insert trigger (migration 00034).
func (r *CommentRepository) insertReplyRow(ctx context.Context, db dao.DBTX, c domain.Comment) (dao.Comment, error) {
	parent, err := r.lockComment(ctx, db, c.ParentID)
	if err != nil {
		return dao.Comment{}, err
	}
	place, err := domain.PlaceReply(c.ArticleID, parent)
	if err != nil {
		return dao.Comment{}, err
	}
	if place.ParentID != parent.ID { // clamped: the grandparent takes the reply
		if _, err := r.lockComment(ctx, db, place.ParentID); err != nil {
			return dao.Comment{}, err
		}
	}
	row, err := r.q.CommentInsertReply(ctx, db, dao.CommentInsertReplyParams{ArticleID: c.ArticleID, AuthorID: c.AuthorID, Body: c.Body,
		ParentID: place.ParentID, RootID: place.RootID, Depth: place.Depth})
	if err != nil {
		return dao.Comment{}, pg.Wrapf(err, "insert a reply to comment %d", place.ParentID)
	}
	return row, nil
}

// lockComment reads comment id locked FOR UPDATE; a missing one is a parentId error.
func (r *CommentRepository) lockComment(ctx context.Context, db dao.DBTX, id int64) (domain.Comment, error) {
	row, err := r.q.CommentLockForReply(ctx, db, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Comment{}, domain.ParentNotFound()
	}
	if err != nil {
		return domain.Comment{}, pg.Wrapf(err, "lock comment %d", id)
	}
	return commentFromRow(row), nil
}

// deleteThreaded deletes comment id in tx: a comment without replies is removed (and so is each
// placeholder ancestor whose last reply that was), a comment with replies becomes a placeholder.
// The row lock orders it against replies arriving (they lock their parent first).
func (r *CommentRepository) deleteThreaded(ctx context.Context, tx *pg.Tx, id int64) error {
	c, err := r.q.CommentLock(ctx, tx, id)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && c.DeletedAt.Valid) {
		return domain.ErrNotFound
	}
	if err != nil {
		return pg.Wrapf(err, "lock comment %d", id)
	}
	if c.RepliesCount > 0 {
		if _, err := r.q.CommentMakePlaceholder(ctx, tx, id); err != nil {
			return pg.Wrapf(err, "empty comment %d", id)
		}
		return nil
	}
	parent, err := r.q.CommentDeleteLeaf(ctx, tx, id)
	if err != nil {
		return pg.Wrapf(err, "delete comment %d", id)
	}
	// A placeholder whose last reply went has nothing left to hold in place (at most two levels).
	for parent.Valid {
		next, err := r.q.CommentDeletePlaceholder(ctx, tx, parent.Int64)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return pg.Wrapf(err, "delete placeholder %d", parent.Int64)
		}
		parent = next
	}
	return nil
}

// Edit replaces comment id's body and marks it edited; ErrNotFound for a missing comment or a
// placeholder.
func (r *CommentRepository) Edit(ctx context.Context, id int64, body string) (domain.Comment, error) {
	row, err := r.q.CommentEdit(ctx, r.pool, dao.CommentEditParams{ID: id, Body: body})
	if err != nil {
		return domain.Comment{}, pg.Wrapf(err, "edit comment %d", id)
	}
	return commentFromRow(row), nil
}

// Replies returns comment parentID's direct replies with ids after afterID, oldest first, at
// most limit: one range of comments_replies_idx.
func (r *CommentRepository) Replies(ctx context.Context, parentID, afterID int64, limit int) ([]domain.Comment, error) {
	rows, err := r.q.CommentListReplies(ctx, pg.ReadsOn(ctx, r.reads, r.pool), dao.CommentListRepliesParams{ParentID: parentID, AfterID: afterID, Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "list the replies of comment %d", parentID)
	}
	out := make([]domain.Comment, len(rows))
	for i, row := range rows {
		out[i] = commentFromRow(row)
	}
	return out, nil
}
