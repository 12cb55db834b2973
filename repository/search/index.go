package search

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// NewReindexer returns a Repository for the one-off commands (`inkwell search
// reindex`): BackfillSearch and Reindex only, with no caches.
func NewReindexer(pool *pgxpool.Pool, q dao.Querier, lang Language, log *slog.Logger) *Repository {
	return NewRepository(Pool{Pool: pool}, Replicas{}, q, lang, nil, nil, log)
}

// searchBatch is how many articles one backfill or reindex statement indexes: each is a short
// transaction, so an edit waits behind at most one batch's row locks.
const searchBatch = 500

// BackfillSearch gives a search document and a place in publication order to the published
// articles without one (written before migrations 00021 and 00024, or by an instance of an older
// version during a rolling upgrade), oldest publication first, a batch per
// transaction until none is left. One instance of a fleet works at a time: a batch runs only
// while its transaction holds an advisory lock, and an instance that cannot take it stops (the
// holder is doing the work). Returns the articles it indexed.
func (r *Repository) BackfillSearch(ctx context.Context) (int, error) {
	total := 0
	for {
		var n int
		var busy bool
		err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
			locked, err := r.q.ArticleSearchBackfillLock(ctx, tx)
			if err != nil || !locked {
				busy = !locked
				return pg.Wrapf(err, "take the search backfill lock")
			}
			ids, err := r.q.ArticleSearchBackfill(ctx, tx, dao.ArticleSearchBackfillParams{SearchConfig: string(r.lang), Lim: searchBatch})
			n = len(ids)
			return pg.Wrapf(err, "backfill search documents")
		})
		if err != nil || busy {
			return total, err
		}
		total += n
		if n < searchBatch {
			return total, nil
		}
	}
}

// Reindex recomputes the search document of every published article in the configured language
// (`inkwell search reindex`: after a change of INKWELL_SEARCH_LANGUAGE or of the document
// function), walking the primary key a batch per statement. progress gets the ids scanned and the
// articles reindexed so far after each batch.
func (r *Repository) Reindex(ctx context.Context, progress func(scanned, reindexed int64)) error {
	var after, scanned, reindexed int64
	for {
		row, err := r.q.ArticleSearchReindex(ctx, r.pool, dao.ArticleSearchReindexParams{
			AfterID: after, Lim: searchBatch, SearchConfig: string(r.lang),
		})
		if err != nil {
			return pg.Wrapf(err, "reindex articles after %d", after)
		}
		scanned, reindexed = scanned+row.Scanned, reindexed+row.Reindexed
		if progress != nil {
			progress(scanned, reindexed)
		}
		if row.Scanned < searchBatch {
			return nil
		}
		after = row.LastID
	}
}
