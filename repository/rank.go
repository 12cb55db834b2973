package repository

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// RankRepository feeds the ranking job straight from PostgreSQL (no cache: the job reads every
// recent article once per run, and its like counts must be the truth).
type RankRepository struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewRankRepository returns the repository.
func NewRankRepository(pool *pgxpool.Pool, q dao.Querier) *RankRepository {
	return &RankRepository{pool: pool, q: q}
}

// ScanPublished returns one batch of ranking candidates (id and publication time only),
// newest-published first.
func (r *RankRepository) ScanPublished(ctx context.Context, since time.Time, after *domain.Cursor, limit int) ([]domain.Candidate, error) {
	p := dao.ArticleRankScanParams{Since: since, Lim: int32(limit)}
	if after != nil {
		p.BeforePublishedAt = pgtype.Timestamptz{Time: after.CreatedAt, Valid: true}
		p.BeforeID = pgtype.Int8{Int64: after.ID, Valid: true}
	}
	rows, err := r.q.ArticleRankScan(ctx, r.pool, p)
	if err != nil {
		return nil, pg.Wrapf(err, "scan published articles")
	}
	out := make([]domain.Candidate, len(rows))
	for i, row := range rows {
		out[i] = domain.Candidate{ID: row.ID, PublishedAt: row.PublishedAt.Time}
	}
	return out, nil
}

// Summaries returns the summaries (no body) of ids that exist, in one query.
func (r *RankRepository) Summaries(ctx context.Context, ids []int64) ([]domain.Article, error) {
	if len(ids) == 0 {
		return []domain.Article{}, nil
	}
	rows, err := r.q.ArticleSummariesByIDs(ctx, r.pool, ids)
	if err != nil {
		return nil, pg.Wrapf(err, "summaries of %d articles", len(ids))
	}
	out := make([]domain.Article, len(rows))
	for i, row := range rows {
		out[i] = summaryFromRow(dao.ArticleListByAuthorRow(row))
	}
	return out, nil
}

// PublishedAmong returns which of ids are published articles now, in one query.
func (r *RankRepository) PublishedAmong(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	found, err := r.q.ArticlePublishedAmong(ctx, r.pool, ids)
	if err != nil {
		return nil, pg.Wrapf(err, "published among %d articles", len(ids))
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// LikeCounts returns like counts for ids in one query.
func (r *RankRepository) LikeCounts(ctx context.Context, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := r.q.InteractiveLikesMany(ctx, r.pool, dao.InteractiveLikesManyParams{Biz: string(domain.BizArticle), BizIds: ids})
	if err != nil {
		return nil, pg.Wrapf(err, "like counts of %d articles", len(ids))
	}
	for _, row := range rows {
		out[row.BizID] = row.LikeCnt
	}
	return out, nil
}
