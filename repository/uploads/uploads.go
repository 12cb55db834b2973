package uploads

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// lockScopeUploads is the scope of UserLockScope that serializes one user's uploads, so the quota
// is counted and kept by one upload at a time.
const lockScopeUploads = "uploads"

// Store keeps uploads (service.UploadStore).
type Store struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewStore returns the upload store.
func NewStore(pool *pgxpool.Pool, q dao.Querier) *Store { return &Store{pool: pool, q: q} }

// Usage reads userID's quota usage.
func (s *Store) Usage(ctx context.Context, userID int64) (domain.UploadUsage, error) {
	return s.usage(ctx, s.pool, userID)
}

// LockUserIn takes userID's upload lock for the rest of tx and reads the usage under it.
func (s *Store) LockUserIn(ctx context.Context, stx service.Tx, userID int64) (domain.UploadUsage, error) {
	tx := pg.TxOf(stx)
	if err := s.q.UserLockScope(ctx, tx, dao.UserLockScopeParams{Scope: lockScopeUploads, UserID: userID}); err != nil {
		return domain.UploadUsage{}, pg.Wrapf(err, "lock the uploads of user %d", userID)
	}
	return s.usage(ctx, tx, userID)
}

func (s *Store) usage(ctx context.Context, db dao.DBTX, userID int64) (domain.UploadUsage, error) {
	r, err := s.q.UploadUsage(ctx, db, userID)
	if err != nil {
		return domain.UploadUsage{}, pg.Wrapf(err, "read the upload usage of user %d", userID)
	}
	return domain.UploadUsage{Total: r.Total, Day: r.Day, DayFreesAt: r.DayFreesAt}, nil
}

// InsertIn inserts u, moves its owner's total and takes its keys off the orphans, in tx.
func (s *Store) InsertIn(ctx context.Context, stx service.Tx, u domain.Upload) (domain.Upload, error) {
	tx := pg.TxOf(stx)
	variants, err := json.Marshal(u.Variants)
	if err != nil {
		return domain.Upload{}, fmt.Errorf("encode the variants of %s: %w", u.Key, err)
	}
	keys := keysOf(u)
	// Taking the keys off the orphans first waits for a retention pass that holds one of them: an
	// object it deletes is put again after this commits.
	if err := s.q.UploadOrphanUnmark(ctx, tx, keys); err != nil {
		return domain.Upload{}, pg.Wrapf(err, "take the keys of %s off the orphans", u.Key)
	}
	row, err := s.q.UploadInsert(ctx, tx, dao.UploadInsertParams{
		UserID: u.UserID, ObjectKey: u.Key, ContentType: u.ContentType, Width: int32(u.Width), Height: int32(u.Height),
		Bytes: u.Bytes, Sha256: u.SHA256, Variants: variants, VariantKeys: keys[1:],
	})
	if err != nil {
		return domain.Upload{}, pg.Wrapf(err, "insert an upload of user %d", u.UserID)
	}
	if err := s.q.UploadTotalAdd(ctx, tx, dao.UploadTotalAddParams{UserID: u.UserID, Delta: u.Bytes}); err != nil {
		return domain.Upload{}, pg.Wrapf(err, "add to the upload total of user %d", u.UserID)
	}
	u.ID, u.CreatedAt = row.ID, row.CreatedAt
	return u, nil
}

// keysOf is u's object keys: the original's first, then the variants'.
func keysOf(u domain.Upload) []string {
	keys := make([]string, 0, 1+len(u.Variants))
	keys = append(keys, u.Key)
	for _, v := range u.Variants {
		keys = append(keys, v.Key)
	}
	return keys
}

// DeleteIn deletes userID's upload id in tx, moves the total and marks its keys orphaned.
func (s *Store) DeleteIn(ctx context.Context, stx service.Tx, userID, id int64) (domain.Upload, error) {
	tx := pg.TxOf(stx)
	row, err := s.q.UploadDelete(ctx, tx, dao.UploadDeleteParams{ID: id, UserID: userID})
	if err != nil {
		return domain.Upload{}, pg.Wrapf(err, "delete upload %d of user %d", id, userID)
	}
	u, err := uploadOf(dao.UploadListByUserRow(row))
	if err != nil {
		return domain.Upload{}, err
	}
	if err := s.q.UploadTotalAdd(ctx, tx, dao.UploadTotalAddParams{UserID: userID, Delta: -u.Bytes}); err != nil {
		return domain.Upload{}, pg.Wrapf(err, "take from the upload total of user %d", userID)
	}
	if err := s.q.UploadOrphanMark(ctx, tx, keysOf(u)); err != nil {
		return domain.Upload{}, pg.Wrapf(err, "mark the keys of upload %d orphaned", id)
	}
	return u, nil
}

// List returns up to limit of userID's uploads after cursor, newest first.
func (s *Store) List(ctx context.Context, userID int64, cursor *domain.Cursor, limit int) ([]domain.Upload, error) {
	before := domain.Cursor{CreatedAt: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), ID: 1<<63 - 1}
	if cursor != nil {
		before = *cursor
	}
	rows, err := s.q.UploadListByUser(ctx, s.pool, dao.UploadListByUserParams{
		UserID: userID, BeforeAt: before.CreatedAt, BeforeID: before.ID, Lim: int32(limit),
	})
	if err != nil {
		return nil, pg.Wrapf(err, "list the uploads of user %d", userID)
	}
	out := make([]domain.Upload, 0, len(rows))
	for _, r := range rows {
		u, err := uploadOf(r)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// Get returns upload id; domain.ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, id int64) (domain.Upload, error) {
	r, err := s.q.UploadGetByID(ctx, s.pool, id)
	if err != nil {
		return domain.Upload{}, pg.Wrapf(err, "read upload %d", id)
	}
	return uploadOf(dao.UploadListByUserRow(r))
}

// SweepOrphans holds up to limit keys orphaned longer than grace ago in one unit of work, calls
// remove for each no upload uses, and forgets them all. An upload of one of these keys meanwhile
// waits for this unit of work (InsertIn), then puts its objects again after its own commit.
func (s *Store) SweepOrphans(ctx context.Context, grace time.Duration, limit int, remove func(ctx context.Context, key string) error) (int, error) {
	removed := 0
	err := pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		removed = 0
		rows, err := s.q.UploadOrphanClaim(ctx, tx, dao.UploadOrphanClaimParams{GraceSeconds: grace.Seconds(), Lim: int32(max(limit, 1))})
		if err != nil {
			return pg.Wrapf(err, "claim orphaned upload keys")
		}
		if len(rows) == 0 {
			return nil
		}
		keys := make([]string, 0, len(rows))
		for _, r := range rows {
			if !r.Used {
				if err := remove(ctx, r.ObjectKey); err != nil {
					return fmt.Errorf("remove object %s: %w", r.ObjectKey, err)
				}
				removed++
			}
			keys = append(keys, r.ObjectKey)
		}
		return pg.Wrapf(s.q.UploadOrphanDrop(ctx, tx, keys), "forget %d orphaned keys", len(keys))
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

func uploadOf(r dao.UploadListByUserRow) (domain.Upload, error) {
	u := domain.Upload{ID: r.ID, UserID: r.UserID, Key: r.ObjectKey, ContentType: r.ContentType, Width: int(r.Width),
		Height: int(r.Height), Bytes: r.Bytes, SHA256: r.Sha256, CreatedAt: r.CreatedAt}
	if err := json.Unmarshal(r.Variants, &u.Variants); err != nil {
		return domain.Upload{}, fmt.Errorf("decode the variants of upload %d: %w", r.ID, err)
	}
	return u, nil
}

// CountOrphans counts, up to limit, the keys orphaned longer than grace ago (some may be in use
// again; SweepOrphans tells).
func (s *Store) CountOrphans(ctx context.Context, grace time.Duration, limit int) (int64, error) {
	n, err := s.q.UploadOrphanCount(ctx, s.pool, dao.UploadOrphanCountParams{GraceSeconds: grace.Seconds(), Lim: int32(max(limit, 1))})
	return n, pg.Wrapf(err, "count orphaned upload keys")
}
