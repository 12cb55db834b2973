package repository

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// SitemapRepository reads sitemap pages along articles_sitemap_idx (migration 00030): a page is a
// range of publication places, so its cost does not depend on how many pages come before it.
type SitemapRepository struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewSitemapRepository returns the repository.
func NewSitemapRepository(pool *pgxpool.Pool, q dao.Querier) *SitemapRepository {
	return &SitemapRepository{pool: pool, q: q}
}

// LastSitemapSeq implements service.SitemapStore.
func (r *SitemapRepository) LastSitemapSeq(ctx context.Context) (int64, error) {
	last, err := r.q.SitemapLastSeq(ctx, r.pool)
	return last, pg.Wrapf(err, "last sitemap place")
}

// SitemapSlice implements service.SitemapStore.
func (r *SitemapRepository) SitemapSlice(ctx context.Context, from, until int64) ([]service.SitemapArticle, error) {
	rows, err := r.q.SitemapPage(ctx, r.pool, dao.SitemapPageParams{FromSeq: from, UntilSeq: until})
	if err != nil {
		return nil, pg.Wrapf(err, "sitemap places [%d, %d)", from, until)
	}
	out := make([]service.SitemapArticle, len(rows))
	for i, row := range rows {
		out[i] = service.SitemapArticle{Slug: row.Slug, UpdatedAt: row.UpdatedAt}
	}
	return out, nil
}
