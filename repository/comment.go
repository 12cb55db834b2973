package repository

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// CommentRepository stores comments in PostgreSQL.
type CommentRepository struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewCommentRepository returns the repository.
func NewCommentRepository(pool *pgxpool.Pool, q dao.Querier) *CommentRepository {
	return &CommentRepository{pool: pool, q: q}
}

// Create numbers the comment with its article's next sequence number and stores it, in a unit
// of work of its own (see CreateIn).
func (r *CommentRepository) Create(ctx context.Context, c domain.Comment) (domain.Comment, error) {
	var created domain.Comment
	err := inTx(ctx, r.pool, defaultRetry, func(tx *Tx) error {
		var err error
		created, err = r.CreateIn(ctx, tx, c)
		return err
	})
	return created, err
}

// CreateIn numbers and stores the comment in the caller's unit of work: a failed insert gives the
// number back, so numbers have no gaps.
func (r *CommentRepository) CreateIn(ctx context.Context, stx service.Tx, c domain.Comment) (domain.Comment, error) {
	var row dao.Comment
	err := txOf(stx).savepoint(ctx, func(db pgx.Tx) error {
		seq, err := queries.CommentSeqNext(ctx, db, c.ArticleID)
		if errors.Is(err, pgx.ErrNoRows) {
			return domain.ErrNotFound // the article was deleted meanwhile
		}
		if err != nil {
			return wrapf(err, "number comment on article %d", c.ArticleID)
		}
		row, err = queries.CommentInsert(ctx, db, dao.CommentInsertParams{ArticleID: c.ArticleID, Seq: seq, AuthorID: c.AuthorID, Body: c.Body})
		return wrapf(err, "insert comment on article %d", c.ArticleID)
	})
	if err != nil {
		return domain.Comment{}, err
	}
	return commentFromRow(row), nil
}

// List returns the article's comments numbered after afterSeq, in order, at most limit.
func (r *CommentRepository) List(ctx context.Context, articleID, afterSeq int64, limit int) ([]domain.Comment, error) {
	rows, err := r.q.CommentListByArticle(ctx, r.pool, dao.CommentListByArticleParams{ArticleID: articleID, AfterSeq: afterSeq, Lim: int32(limit)})
	if err != nil {
		return nil, wrapf(err, "list comments of article %d", articleID)
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
		return domain.Comment{}, wrapf(err, "get comment %d", id)
	}
	return commentFromRow(row), nil
}

// Delete removes one comment.
func (r *CommentRepository) Delete(ctx context.Context, id int64) error {
	n, err := r.q.CommentDelete(ctx, r.pool, id)
	if err != nil {
		return wrapf(err, "delete comment %d", id)
	}
	if n == 0 {
		return domain.ErrNotFound
	}
	return nil
}

func commentFromRow(row dao.Comment) domain.Comment {
	return domain.Comment{ID: row.ID, ArticleID: row.ArticleID, Seq: row.Seq, AuthorID: row.AuthorID, Body: row.Body,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}
}
