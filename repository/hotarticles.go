package repository

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// HotArticleStore keeps the latest ranking in PostgreSQL (table hot_articles), the copy a process
// serves the hot list from while Redis cannot.
type HotArticleStore struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewHotArticleStore returns the store.
func NewHotArticleStore(pool *pgxpool.Pool, q dao.Querier) *HotArticleStore {
	return &HotArticleStore{pool: pool, q: q}
}

// Replace makes ranked (best first) the kept ranking, as a whole, in one short transaction:
// readers see the previous ranking or this one, never a mix, and the table holds no more rows
// than the list.
func (s *HotArticleStore) Replace(ctx context.Context, rankedAt time.Time, ranked []domain.Scored) error {
	p := dao.HotArticleInsertRankingParams{
		RankedAt:   rankedAt,
		Positions:  make([]int32, len(ranked)),
		ArticleIds: make([]int64, len(ranked)),
		Likes:      make([]int64, len(ranked)),
		Scores:     make([]float64, len(ranked)),
	}
	for i, r := range ranked {
		p.Positions[i], p.ArticleIds[i], p.Likes[i], p.Scores[i] = int32(i+1), r.ID, r.Likes, r.Score
	}
	err := pg.RunTx(ctx, s.pool, pg.DefaultRetry, func(ctx context.Context, tx pgx.Tx) error {
		if err := s.q.HotArticleLockForReplace(ctx, tx); err != nil {
			return err
		}
		if err := s.q.HotArticleDeleteAll(ctx, tx); err != nil {
			return err
		}
		if len(ranked) == 0 {
			return nil
		}
		return s.q.HotArticleInsertRanking(ctx, tx, p)
	})
	return pg.Wrapf(err, "replace the kept ranking (%d articles)", len(ranked))
}

// Latest returns the kept ranking, best first; domain.ErrNotFound when none is kept (no run has
// stored one, or the last run listed nothing).
func (s *HotArticleStore) Latest(ctx context.Context) (domain.Ranking, error) {
	rows, err := s.q.HotArticleListAll(ctx, s.pool)
	if err != nil {
		return domain.Ranking{}, pg.Wrapf(err, "load the kept ranking")
	}
	if len(rows) == 0 {
		return domain.Ranking{}, domain.ErrNotFound
	}
	out := domain.Ranking{Entries: make([]domain.Scored, len(rows)), RankedAt: rows[0].RankedAt}
	for i, r := range rows {
		out.Entries[i] = domain.Scored{ID: r.ArticleID, Likes: r.Likes, Score: r.Score}
	}
	return out, nil
}
