package repository

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// ReadRepository applies batches of read events and serves reading history.
type ReadRepository struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	counters *cache.Counters
}

// NewReadRepository returns the repository.
func NewReadRepository(pool *pgxpool.Pool, q dao.Querier, counters *cache.Counters) *ReadRepository {
	return &ReadRepository{pool: pool, q: q, counters: counters}
}

// applyTimeout bounds one batch statement, which runs detached from its caller's cancellation.
const applyTimeout = 30 * time.Second

// ApplyReads counts a batch of read events once each: one statement records the event ids in the
// inbox under consumer, keeps only the new ones and adds their per-article sums to read_cnt; the
// counters cache follows. It returns how many reads were new (an aggregated event counts its
// Count). The events of one aggregated batch share its id, so they are new or replayed together.
func (r *ReadRepository) ApplyReads(ctx context.Context, consumer string, evs []domain.ReadEvent) (int64, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(evs))
	articles := make([]int64, len(evs))
	reads := make([]int64, len(evs))
	for i, ev := range evs {
		ids[i], articles[i], reads[i] = ev.ID, ev.ArticleID, ev.Reads()
	}
	// The statement does not die with ctx. A consumer stopped between PostgreSQL's commit and its
	// answer would otherwise fail here without touching Redis, and the retry would find every id
	// in the inbox. Only the timeout (or a lost connection) can still end the statement that way,
	// and then the hashes are marked suspect: the batch may have committed.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyTimeout)
	defer cancel()
	rows, err := r.q.ReadEventsApply(sctx, r.pool, dao.ReadEventsApplyParams{Consumer: consumer, EventIds: ids, ArticleIds: articles, Reads: reads})
	if err != nil {
		r.counters.Suspect(ctx, domain.BizArticle, articles...)
		return 0, pg.Wrapf(err, "apply %d read events", len(evs))
	}
	stored := make(map[int64]cache.CounterRow, len(rows))
	var applied int64
	for _, row := range rows {
		stored[row.ArticleID] = counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)
		applied += row.Reads
	}
	// PostgreSQL has committed. The cache's failures do not fail the batch (a retry would find the
	// events already in the inbox): the cache repairs its hashes itself.
	r.counters.Stored(ctx, domain.BizArticle, stored)
	return applied, nil
}

// ApplyHistory records, for each signed-in reader in the batch, when they last read each article.
func (r *ReadRepository) ApplyHistory(ctx context.Context, evs []domain.ReadEvent) error {
	var users, articles []int64
	var ats []time.Time
	for _, ev := range evs {
		if ev.UserID == 0 {
			continue
		}
		users, articles, ats = append(users, ev.UserID), append(articles, ev.ArticleID), append(ats, ev.At)
	}
	if len(users) == 0 {
		return nil
	}
	return pg.Wrapf(r.q.ReadHistoryApply(ctx, r.pool, dao.ReadHistoryApplyParams{UserIds: users, ArticleIds: articles, ReadAts: ats}),
		"apply %d history entries", len(users))
}

// History lists userID's reads, most recent first, after the cursor (read time, article id).
func (r *ReadRepository) History(ctx context.Context, userID int64, after *domain.Cursor, limit int) ([]domain.HistoryEntry, error) {
	before := cursorOrFirst(after)
	p := dao.ReadHistoryListParams{UserID: userID, Lim: int32(limit), BeforeReadAt: before.CreatedAt, BeforeArticleID: before.ID}
	rows, err := r.q.ReadHistoryList(ctx, r.pool, p)
	if err != nil {
		return nil, pg.Wrapf(err, "list history of %d", userID)
	}
	out := make([]domain.HistoryEntry, len(rows))
	for i, row := range rows {
		out[i] = domain.HistoryEntry{ArticleID: row.ArticleID, ReadAt: row.LastReadAt}
	}
	return out, nil
}
