package repository

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// NotificationPublisher learns, after COMMIT, which users were just notified, so the instances
// holding their live streams (service.NotificationStreamService) send the new notifications at
// once: Notified names the users (their streams read PostgreSQL), NotifiedWith carries the
// notifications themselves, rendered (their streams write them without a query).
// cache.NotificationHub is the one that publishes through Redis.
type NotificationPublisher interface {
	Notified(ctx context.Context, userIDs []int64)
	NotifiedWith(ctx context.Context, items []domain.UserNotification)
}

// NewPublishingNotificationRepository is NewNotificationRepository whose writes announce the
// users they notified to pub once their unit of work has committed (nil: to nobody).
func NewPublishingNotificationRepository(pool *pgxpool.Pool, q dao.Querier, pub NotificationPublisher) *NotificationRepository {
	r := NewNotificationRepository(pool, q)
	r.pub = pub
	return r
}

// announceCarryMax bounds the notifications one fan-out's announcement carries: a famous
// author's millions of followers are announced by user id alone (their streams read PostgreSQL),
// so neither the transaction's memory nor the messages grow with the notifications' text.
const announceCarryMax = 10_000

// announce has the users notified in tx announced once tx has committed (their streams read
// their new notifications from PostgreSQL).
func (r *NotificationRepository) announce(tx *pg.Tx, userIDs []int64) {
	if r.pub == nil || len(userIDs) == 0 {
		return
	}
	tx.AfterCommit(func(ctx context.Context) { r.pub.Notified(ctx, userIDs) })
}

// announceWith has the fan-out's notifications written in tx announced, rendered (parts: what
// their rows lack), once tx has committed.
func (r *NotificationRepository) announceWith(tx *pg.Tx, kind string, parts dao.NotificationFanOutRenderRow, rows []dao.NotificationFanOutRow) {
	if r.pub == nil || len(rows) == 0 {
		return
	}
	items := make([]domain.UserNotification, len(rows))
	for i, row := range rows {
		items[i] = domain.UserNotification{UserID: row.UserID, Notification: domain.Notification{ID: row.ID, Kind: kind,
			ActorUsername: parts.ActorUsername, ArticleSlug: parts.ArticleSlug, ArticleTitle: parts.ArticleTitle, CreatedAt: row.CreatedAt}}
	}
	tx.AfterCommit(func(ctx context.Context) { r.pub.NotifiedWith(ctx, items) })
}

// afterRequest is one stream's read: userID's notifications after afterID, at most limit.
type afterRequest struct {
	userID, afterID int64
	limit           int
}

// afterBatchMax bounds the reads one statement carries; afterBatchTimeout bounds the statement.
const (
	afterBatchMax     = 1000
	afterBatchTimeout = 10 * time.Second
)

// After returns userID's notifications with an id above afterID, oldest first, at most limit.
// The reads of the streams a wake-up woke together (one announcement of a thousand followers
// wakes a thousand streams) share statements: the first goes at once, those arriving while it
// runs go together in the next (keyedBatcher).
func (r *NotificationRepository) After(ctx context.Context, userID, afterID int64, limit int) ([]domain.Notification, error) {
	r.afterOnce.Do(func() {
		r.afterBatch = newKeyedBatcher(afterBatchMax, afterBatchTimeout, r.afterMany)
	})
	return r.afterBatch.add(ctx, struct{}{}, afterRequest{userID: userID, afterID: afterID, limit: limit})
}

// afterMany runs the reads of items in one statement.
func (r *NotificationRepository) afterMany(ctx context.Context, _ struct{}, items []afterRequest) ([][]domain.Notification, []error) {
	p := dao.NotificationStreamAfterManyParams{UserIds: make([]int64, len(items)), AfterIds: make([]int64, len(items))}
	for i, it := range items {
		p.UserIds[i], p.AfterIds[i] = it.userID, it.afterID
		p.Lim = max(p.Lim, int32(it.limit))
	}
	outs := make([][]domain.Notification, len(items))
	rows, err := r.q.NotificationStreamAfterMany(ctx, r.pool, p)
	if err != nil {
		errs := make([]error, len(items))
		for i := range errs {
			errs[i] = pg.Wrapf(err, "notifications of %d streams", len(items))
		}
		return outs, errs
	}
	for _, row := range rows {
		i := int(row.Ord) - 1
		if i < 0 || i >= len(items) || len(outs[i]) >= items[i].limit {
			continue
		}
		n := domain.Notification{ID: row.ID, Kind: row.Kind, ActorUsername: row.ActorUsername.String,
			ArticleSlug: row.ArticleSlug.String, ArticleTitle: row.ArticleTitle.String, Detail: row.Detail, CreatedAt: row.CreatedAt}
		if row.ReadAt.Valid {
			t := row.ReadAt.Time
			n.ReadAt = &t
		}
		outs[i] = append(outs[i], n)
	}
	return outs, nil
}

// LatestID is the id of userID's newest notification (0: none).
func (r *NotificationRepository) LatestID(ctx context.Context, userID int64) (int64, error) {
	id, err := r.q.NotificationStreamLatestID(ctx, r.pool, userID)
	return id, pg.Wrapf(err, "newest notification of %d", userID)
}
