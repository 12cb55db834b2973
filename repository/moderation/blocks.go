package moderation

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Blocks stores who blocks whom (user_blocks). The set a user blocks is read through
// cache.Blocks; every change drops it on every instance before it answers.
type Blocks struct {
	pool  *pgxpool.Pool
	q     dao.Querier
	cache *cache.Blocks
	log   *slog.Logger
}

// NewBlocks returns the block store.
func NewBlocks(pool *pgxpool.Pool, q dao.Querier, c *cache.Blocks, log *slog.Logger) *Blocks {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Blocks{pool: pool, q: q, cache: c, log: log}
}

// LockPairIn serializes the caller's unit of work with every other block or follow between a and
// b, until it ends.
func (b *Blocks) LockPairIn(ctx context.Context, stx service.Tx, a, bID int64) error {
	err := b.q.UserBlockLockPair(ctx, pg.TxOf(stx), dao.UserBlockLockPairParams{A: a, B: bID})
	return pg.Wrapf(err, "lock the users %d and %d", a, bID)
}

// BetweenIn reports, in the caller's unit of work, whether a blocks b and whether b blocks a.
func (b *Blocks) BetweenIn(ctx context.Context, stx service.Tx, a, bID int64) (aBlocksB, bBlocksA bool, err error) {
	row, err := b.q.UserBlockBetween(ctx, pg.TxOf(stx), dao.UserBlockBetweenParams{A: a, B: bID})
	if err != nil {
		return false, false, pg.Wrapf(err, "read the blocks between %d and %d", a, bID)
	}
	return row.ABlocksB, row.BBlocksA, nil
}

// BlockIn records that blockerID blocks blockedID in the caller's unit of work and reports whether
// the block is new. After the commit (or when its outcome is unknown) the blocker's cached set is
// dropped on every instance, before the unit of work returns.
func (b *Blocks) BlockIn(ctx context.Context, stx service.Tx, blockerID, blockedID int64) (bool, error) {
	tx := pg.TxOf(stx)
	n, err := b.q.UserBlockInsert(ctx, tx, dao.UserBlockInsertParams{BlockerID: blockerID, BlockedID: blockedID})
	if err != nil {
		return false, pg.Wrapf(err, "block %d -> %d", blockerID, blockedID)
	}
	drop := func(ctx context.Context) { b.changed(ctx, blockerID) }
	tx.AfterCommit(drop)
	tx.IfCommitUnknown(drop)
	return n > 0, nil
}

// Unblock removes the block if there is one and reports whether there was. The blocker's cached
// set is dropped after the statement, whatever it returned (an error may hide a commit).
func (b *Blocks) Unblock(ctx context.Context, blockerID, blockedID int64) (bool, error) {
	n, err := b.q.UserBlockDelete(ctx, b.pool, dao.UserBlockDeleteParams{BlockerID: blockerID, BlockedID: blockedID})
	b.changed(ctx, blockerID)
	if err != nil {
		return false, pg.Wrapf(err, "unblock %d -> %d", blockerID, blockedID)
	}
	return n > 0, nil
}

// BlockedBy returns the ids blockerID blocks, through the cache: on a warm read, no round trip.
func (b *Blocks) BlockedBy(ctx context.Context, blockerID int64) ([]int64, error) {
	ids, err := b.cache.Blocked(ctx, blockerID, func(ctx context.Context) ([]int64, error) {
		ids, err := b.q.UserBlockListBlockedIDs(ctx, b.pool, blockerID)
		return ids, pg.Wrapf(err, "list the users %d blocks", blockerID)
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// List returns up to limit of blockerID's blocks after cursor (nil: from the newest), newest
// first. The cursor is the last entry's (BlockedAt, UserID).
func (b *Blocks) List(ctx context.Context, blockerID int64, cursor *domain.Cursor, limit int) ([]domain.BlockedUser, error) {
	p := dao.UserBlockListRecentParams{BlockerID: blockerID, BeforeCreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), AfterID: 0, Lim: int32(min(limit, math.MaxInt32))}
	if cursor != nil {
		p.BeforeCreatedAt, p.AfterID = cursor.CreatedAt, cursor.ID
	}
	rows, err := b.q.UserBlockListRecent(ctx, b.pool, p)
	if err != nil {
		return nil, pg.Wrapf(err, "list the blocks of %d", blockerID)
	}
	out := make([]domain.BlockedUser, len(rows))
	for i, r := range rows {
		out[i] = domain.BlockedUser{UserID: r.BlockedID, Username: r.Username, Bio: r.Bio, Image: r.Image, BlockedAt: r.CreatedAt}
	}
	return out, nil
}

// changed drops blockerID's cached set everywhere; a failure is logged (the repairer writes it
// again once Redis answers).
func (b *Blocks) changed(ctx context.Context, blockerID int64) {
	if err := b.cache.Changed(context.WithoutCancel(ctx), blockerID); err != nil {
		b.log.WarnContext(ctx, "blocked-set invalidation failed: retried until Redis takes it", "blocker_id", blockerID, "err", err)
	}
}
