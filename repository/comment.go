package repository

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// CommentRepository stores comments in PostgreSQL. Lists of comments and replies are read through
// reads (a read replica that has replayed enough; nil: pool); a single comment, which a write
// checks before it changes it, is read on the primary.
type CommentRepository struct {
	pool  *pgxpool.Pool
	reads *pg.ReadRouter
	q     dao.Querier
	batch *commentBatcher
}

// NewCommentRepository returns the repository.
func NewCommentRepository(pool *pgxpool.Pool, q dao.Querier, reads *pg.ReadRouter) *CommentRepository {
	r := &CommentRepository{pool: pool, reads: reads, q: q}
	r.batch = newCommentBatcher(func(ctx context.Context, articleID int64, cs []domain.Comment) ([]dao.Comment, error) {
		return r.insertNumbered(ctx, r.pool, articleID, cs)
	})
	return r
}

// Create numbers the comment with its article's next sequence number and stores it, committed on
// its own: together with the comments on the same article that arrive meanwhile, as one statement
// (see commentBatcher), so numbers stay gapless and in commit order.
func (r *CommentRepository) Create(ctx context.Context, c domain.Comment) (domain.Comment, error) {
	if c.ParentID != 0 { // a reply locks its parent: its own unit of work (comment_threads.go)
		var out domain.Comment
		err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
			var err error
			out, err = r.insertReply(ctx, tx, c)
			return err
		})
		return out, err
	}
	row, err := r.batch.add(ctx, c)
	if err != nil {
		return domain.Comment{}, err
	}
	return commentFromRow(row), nil
}

// CreateIn numbers and stores the comment in the caller's unit of work: a failed insert gives the
// number back, so numbers have no gaps. The article's counter stays locked until that unit of
// work ends.
func (r *CommentRepository) CreateIn(ctx context.Context, stx service.Tx, c domain.Comment) (domain.Comment, error) {
	var row dao.Comment
	err := pg.TxOf(stx).Savepoint(ctx, func(db pgx.Tx) error {
		if c.ParentID != 0 {
			var err error
			row, err = r.insertReplyRow(ctx, db, c)
			return err
		}
		rows, err := r.insertNumbered(ctx, db, c.ArticleID, []domain.Comment{c})
		row, err = firstRow(rows, err)
		return err
	})
	if err != nil {
		return domain.Comment{}, err
	}
	return commentFromRow(row), nil
}

// insertNumbered numbers and inserts comments on one article in one statement; no rows and no
// error when the article's counter is gone (the article was deleted).
func (r *CommentRepository) insertNumbered(ctx context.Context, db dao.DBTX, articleID int64, cs []domain.Comment) ([]dao.Comment, error) {
	authors, bodies := make([]int64, len(cs)), make([]string, len(cs))
	for i, c := range cs {
		authors[i], bodies[i] = c.AuthorID, c.Body
	}
	rows, err := r.q.CommentInsertNumbered(ctx, db, dao.CommentInsertNumberedParams{ArticleID: articleID, AuthorIds: authors, Bodies: bodies})
	return rows, pg.Wrapf(err, "insert %d comments on article %d", len(cs), articleID)
}

// List returns the article's comments numbered after afterSeq, in order, at most limit.
func (r *CommentRepository) List(ctx context.Context, articleID, afterSeq int64, limit int) ([]domain.Comment, error) {
	rows, err := r.q.CommentListByArticle(ctx, pg.ReadsOn(ctx, r.reads, r.pool), dao.CommentListByArticleParams{ArticleID: articleID, AfterSeq: afterSeq, Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "list comments of article %d", articleID)
	}
	out := make([]domain.Comment, len(rows))
	for i, row := range rows {
		out[i] = commentFromRow(row)
	}
	return out, nil
}

// Get returns one comment.
func (r *CommentRepository) Get(ctx context.Context, id int64) (domain.Comment, error) {
	row, err := r.q.CommentGetByID(ctx, r.pool, id)
	if err != nil {
		return domain.Comment{}, pg.Wrapf(err, "get comment %d", id)
	}
	return commentFromRow(row), nil
}

// Delete removes one comment: a leaf goes, a comment with replies becomes a placeholder
// (comment_threads.go).
func (r *CommentRepository) Delete(ctx context.Context, id int64) error {
	return pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error { return r.deleteThreaded(ctx, tx, id) })
}

func commentFromRow(row dao.Comment) domain.Comment {
	return domain.Comment{ID: row.ID, ArticleID: row.ArticleID, Seq: row.Seq, AuthorID: row.AuthorID.Int64, Body: row.Body,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		Moderation: domain.ContentModeration{Hidden: row.HiddenReason.Valid, Reason: row.HiddenReason.String},
		ParentID:   row.ParentID.Int64, RootID: row.RootID.Int64, Depth: row.Depth, RepliesCount: int64(row.RepliesCount),
		Deleted: row.DeletedAt.Valid, Edited: row.EditedAt.Valid}
}
