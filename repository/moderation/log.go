package moderation

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Log is the moderation log: every action, appended in the action's unit of work.
type Log struct {
	pool *pgxpool.Pool
	q    dao.Querier
	pub  NoticePublisher // nil: notices are not announced (notification_stream.go)
}

// NewLog returns the moderation log.
func NewLog(pool *pgxpool.Pool, q dao.Querier, pub NoticePublisher) *Log {
	return &Log{pool: pool, q: q, pub: pub}
}

// AppendIn appends e in the caller's unit of work and returns it with its id and time.
func (l *Log) AppendIn(ctx context.Context, stx service.Tx, e domain.ModerationEntry) (domain.ModerationEntry, error) {
	tx := pg.TxOf(stx)
	row, err := l.q.ModerationLogAppend(ctx, tx, dao.ModerationLogAppendParams{
		ActorID:     pgtype.Int8{Int64: e.ActorID, Valid: e.ActorID != 0},
		ActorName:   e.ActorName,
		Action:      string(e.Action),
		TargetKind:  string(e.Target.Kind),
		TargetID:    e.Target.ID,
		TargetLabel: e.Target.Label,
		Reason:      e.Reason,
	})
	if err != nil {
		return domain.ModerationEntry{}, pg.Wrapf(err, "append to the moderation log")
	}
	e.ID, e.At = row.ID, row.At
	return e, nil
}

// List returns up to limit entries before cursor (nil: the newest), newest first.
func (l *Log) List(ctx context.Context, cursor *domain.Cursor, limit int) ([]domain.ModerationEntry, error) {
	before := domain.Cursor{CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), ID: math.MaxInt64}
	if cursor != nil {
		before = *cursor
	}
	rows, err := l.q.ModerationLogList(ctx, l.pool, dao.ModerationLogListParams{BeforeAt: before.CreatedAt, BeforeID: before.ID, Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "list the moderation log")
	}
	out := make([]domain.ModerationEntry, len(rows))
	for i, r := range rows {
		out[i] = domain.ModerationEntry{
			ID: r.ID, ActorID: r.ActorID.Int64, ActorName: r.ActorName, Action: domain.ModerationAction(r.Action),
			Target: domain.ModerationTarget{Kind: domain.TargetKind(r.TargetKind), ID: r.TargetID, Label: r.TargetLabel},
			Reason: r.Reason, At: r.At,
		}
	}
	return out, nil
}

// NoticeIn writes a notice in the caller's unit of work (once per reader and event id).
func (l *Log) NoticeIn(ctx context.Context, stx service.Tx, n domain.Notice) error {
	err := l.q.NotificationInsertNotice(ctx, pg.TxOf(stx), dao.NotificationInsertNoticeParams{
		UserID: n.UserID, Kind: n.Kind, ArticleID: pgtype.Int8{Int64: n.ArticleID, Valid: n.ArticleID != 0},
		EventID: n.EventID, Detail: n.Detail,
	})
	if err == nil && l.pub != nil {
		stx.AfterCommit(func(ctx context.Context) { l.pub.Notified(ctx, []int64{n.UserID}) })
	}
	return pg.Wrapf(err, "write a %s notice", n.Kind)
}
