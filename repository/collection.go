package repository

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// CollectionRepository stores collection folders and their items. Adding or removing an item
// changes the article's collect_cnt in the same transaction, which the counters cache follows once
// it has committed.
type CollectionRepository struct {
	pool     *pgxpool.Pool
	q        dao.Querier
	counters *cache.Counters
	viewers  *cache.ViewerState // the owner's collected flags
}

// NewCollectionRepository returns the repository.
func NewCollectionRepository(pool *pgxpool.Pool, q dao.Querier, counters *cache.Counters, viewers *cache.ViewerState) *CollectionRepository {
	return &CollectionRepository{pool: pool, q: q, counters: counters, viewers: viewers}
}

// Create inserts a folder unless the owner has max folders already (domain.ErrCollectionLimit)
// or one of that name (domain.ErrCollectionNameTaken). Creations by one owner take a
// transaction-scoped lock first, so the count and the insert are one step: concurrent creates at
// the cap cannot all pass the count.
func (r *CollectionRepository) Create(ctx context.Context, c domain.Collection, max int) (domain.Collection, error) {
	var row dao.Collection
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		if err := r.q.UserLockScope(ctx, tx, dao.UserLockScopeParams{Scope: lockScopeCollections, UserID: c.OwnerID}); err != nil {
			return pg.Wrapf(err, "lock collections of user %d", c.OwnerID)
		}
		n, err := r.q.CollectionCountByOwner(ctx, tx, c.OwnerID)
		if err != nil {
			return pg.Wrapf(err, "count collections of user %d", c.OwnerID)
		}
		if int(n) >= max {
			return domain.ErrCollectionLimit
		}
		row, err = r.q.CollectionInsert(ctx, tx, dao.CollectionInsertParams{OwnerID: c.OwnerID, Name: c.Name, Description: c.Description})
		return pg.Wrapf(err, "insert collection")
	})
	if err != nil {
		return domain.Collection{}, err
	}
	return collectionFromRow(row, 0), nil
}

// Get returns one folder (without its article count).
func (r *CollectionRepository) Get(ctx context.Context, id int64) (domain.Collection, error) {
	row, err := r.q.CollectionGetByID(ctx, r.pool, id)
	if err != nil {
		return domain.Collection{}, pg.Wrapf(err, "get collection %d", id)
	}
	return collectionFromRow(row, 0), nil
}

// ListByOwner returns the owner's folders, oldest first, with their article counts.
func (r *CollectionRepository) ListByOwner(ctx context.Context, ownerID int64) ([]domain.Collection, error) {
	rows, err := r.q.CollectionListByOwner(ctx, r.pool, ownerID)
	if err != nil {
		return nil, pg.Wrapf(err, "list collections of %d", ownerID)
	}
	out := make([]domain.Collection, len(rows))
	for i, row := range rows {
		out[i] = collectionFromRow(row, row.ArticleCount)
	}
	return out, nil
}

// Update renames or re-describes a folder and returns it with its article count.
func (r *CollectionRepository) Update(ctx context.Context, c domain.Collection) (domain.Collection, error) {
	row, err := r.q.CollectionUpdate(ctx, r.pool, dao.CollectionUpdateParams{ID: c.ID, Name: c.Name, Description: c.Description})
	if err != nil {
		return domain.Collection{}, pg.Wrapf(err, "update collection %d", c.ID)
	}
	return collectionFromRow(row, row.ArticleCount), nil
}

// Delete removes a folder and its items, lowering each item's collect counter, in one transaction;
// domain.ErrNotFound if the folder does not exist (any more).
func (r *CollectionRepository) Delete(ctx context.Context, id int64) error {
	return pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		// Lock first: an Add committing while CollectionDelete ran would have its item removed by
		// the cascade without being in CollectionDelete's snapshot, so its count would stay up.
		owner, err := r.q.CollectionLockForDelete(ctx, tx, id)
		if err != nil {
			return pg.Wrapf(err, "lock collection %d", id)
		}
		articles, err := r.q.CollectionDelete(ctx, tx, id)
		if err != nil {
			return pg.Wrapf(err, "delete collection %d", id)
		}
		r.viewers.Changed(tx, owner, cache.ViewerCollects, articles...)
		rows := make(map[int64]cache.CounterRow, len(articles))
		for _, a := range articles {
			row, err := r.q.InteractiveAddCollects(ctx, tx, dao.InteractiveAddCollectsParams{Biz: string(domain.BizArticle), BizID: a, Delta: -1})
			if err != nil {
				return pg.Wrapf(err, "uncount collect of article %d", a)
			}
			rows[a] = counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)
		}
		r.counters.Changed(tx, domain.BizArticle, rows)
		return nil
	})
}

// Add puts an article into a folder; adding it twice changes nothing. It reports whether it added.
func (r *CollectionRepository) Add(ctx context.Context, collectionID, articleID int64) (bool, error) {
	return r.setItem(ctx, collectionID, articleID, true)
}

// Remove takes an article out of a folder; removing an absent item changes nothing.
func (r *CollectionRepository) Remove(ctx context.Context, collectionID, articleID int64) (bool, error) {
	return r.setItem(ctx, collectionID, articleID, false)
}

func (r *CollectionRepository) setItem(ctx context.Context, collectionID, articleID int64, add bool) (bool, error) {
	var changed bool
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		var n int64
		var err error
		if add {
			n, err = r.q.CollectionItemInsert(ctx, tx, dao.CollectionItemInsertParams{CollectionID: collectionID, ArticleID: articleID})
		} else {
			n, err = r.q.CollectionItemDelete(ctx, tx, dao.CollectionItemDeleteParams{CollectionID: collectionID, ArticleID: articleID})
		}
		if changed = err == nil && n > 0; !changed {
			return pg.Wrapf(err, "set item %d of collection %d", articleID, collectionID)
		}
		// The item's foreign key holds the folder: it exists, and keeps its owner.
		folder, err := r.q.CollectionGetByID(ctx, tx, collectionID)
		if err != nil {
			return pg.Wrapf(err, "get collection %d", collectionID)
		}
		r.viewers.Changed(tx, folder.OwnerID, cache.ViewerCollects, articleID)
		delta := int64(1)
		if !add {
			delta = -1
		}
		row, err := r.q.InteractiveAddCollects(ctx, tx, dao.InteractiveAddCollectsParams{Biz: string(domain.BizArticle), BizID: articleID, Delta: delta})
		if err != nil {
			return pg.Wrapf(err, "count collect of article %d", articleID)
		}
		r.counters.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{articleID: counterRow(row.ReadCnt, row.LikeCnt, row.CollectCnt, row.Version)})
		return nil
	})
	return changed && err == nil, err
}

// Items lists a folder's articles, newest first, after the cursor (added at, article id).
func (r *CollectionRepository) Items(ctx context.Context, collectionID int64, after *domain.Cursor, limit int) ([]domain.CollectionItem, error) {
	before := cursorOrFirst(after)
	p := dao.CollectionItemListParams{CollectionID: collectionID, Lim: int32(limit), BeforeCreatedAt: before.CreatedAt, BeforeArticleID: before.ID}
	rows, err := r.q.CollectionItemList(ctx, r.pool, p)
	if err != nil {
		return nil, pg.Wrapf(err, "list items of collection %d", collectionID)
	}
	out := make([]domain.CollectionItem, len(rows))
	for i, row := range rows {
		out[i] = domain.CollectionItem{ArticleID: row.ArticleID, AddedAt: row.CreatedAt}
	}
	return out, nil
}

func collectionFromRow(row dao.Collection, count int64) domain.Collection {
	return domain.Collection{ID: row.ID, OwnerID: row.OwnerID, Name: row.Name, Description: row.Description,
		ArticleCount: count, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}
}
