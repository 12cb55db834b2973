package repository

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// SetRoleIn gives user id role in the caller's unit of work. After the commit the user's cache
// entries are dropped on every instance before the unit of work returns: the role holds on the
// next request anywhere.
func (r *UserRepository) SetRoleIn(ctx context.Context, stx service.Tx, id int64, role domain.Role) (domain.User, error) {
	tx := pg.TxOf(stx)
	row, err := r.q.UserSetRole(ctx, tx, dao.UserSetRoleParams{ID: id, Role: string(role)})
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "set the role of user %d", id)
	}
	r.droppedEverywhere(tx, row)
	return userFromRow(row), nil
}

// SuspendIn suspends user id until the given time (domain.SuspendedForever: no end) in the
// caller's unit of work; like SetRoleIn, every instance forgets the user before it returns, so
// the user's next request anywhere is refused.
func (r *UserRepository) SuspendIn(ctx context.Context, stx service.Tx, id int64, until time.Time, reason string) (domain.User, error) {
	tx := pg.TxOf(stx)
	row, err := r.q.UserSuspend(ctx, tx, dao.UserSuspendParams{ID: id, Until: until, Reason: reason})
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "suspend user %d", id)
	}
	r.droppedEverywhere(tx, row)
	return userFromRow(row), nil
}

// UnsuspendIn ends user id's suspension in the caller's unit of work; with onlyIfEnded, only one
// whose end has come. changed is false when there was none to end.
func (r *UserRepository) UnsuspendIn(ctx context.Context, stx service.Tx, id int64, onlyIfEnded bool) (u domain.User, changed bool, err error) {
	tx := pg.TxOf(stx)
	row, err := r.q.UserUnsuspend(ctx, tx, dao.UserUnsuspendParams{ID: id, OnlyIfEnded: onlyIfEnded})
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.User{}, false, nil
	}
	if err != nil {
		return domain.User{}, false, pg.Wrapf(err, "end the suspension of user %d", id)
	}
	r.droppedEverywhere(tx, row)
	return userFromRow(row), true, nil
}

func (r *UserRepository) droppedEverywhere(tx *pg.Tx, row dao.User) {
	tx.AfterCommit(func(ctx context.Context) {
		ctx = context.WithoutCancel(ctx)
		if err := r.cache.InvalidateEverywhere(ctx, row.ID, row.Username); err != nil {
			r.log.WarnContext(ctx, "moderation: user cache invalidation failed; it is retried", "user_id", row.ID, "err", err)
		}
	})
}
