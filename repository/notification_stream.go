package repository

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// NotificationPublisher learns, after COMMIT, which users were just notified, so the instances
// holding their live streams (service.NotificationStreamService) read the new notifications at
// once. cache.NotificationHub is the one that publishes through Redis.
type NotificationPublisher interface {
	Notified(ctx context.Context, userIDs []int64)
}

// NewPublishingNotificationRepository is NewNotificationRepository whose writes announce the
// users they notified to pub once their unit of work has committed (nil: to nobody).
func NewPublishingNotificationRepository(pool *pgxpool.Pool, q dao.Querier, pub NotificationPublisher) *NotificationRepository {
	r := NewNotificationRepository(pool, q)
	r.pub = pub
	return r
}

// announce has the users notified in tx announced once tx has committed.
func (r *NotificationRepository) announce(tx *pg.Tx, userIDs []int64) {
	if r.pub == nil || len(userIDs) == 0 {
		return
	}
	tx.AfterCommit(func(ctx context.Context) { r.pub.Notified(ctx, userIDs) })
}

// After returns userID's notifications with an id above afterID, oldest first, at most limit.
func (r *NotificationRepository) After(ctx context.Context, userID, afterID int64, limit int) ([]domain.Notification, error) {
	rows, err := r.q.NotificationStreamAfter(ctx, r.pool, dao.NotificationStreamAfterParams{UserID: userID, AfterID: afterID, Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "notifications of %d after %d", userID, afterID)
	}
	out := make([]domain.Notification, len(rows))
	for i, row := range rows {
		n := domain.Notification{ID: row.ID, Kind: row.Kind, ActorUsername: row.ActorUsername.String,
			ArticleSlug: row.ArticleSlug.String, ArticleTitle: row.ArticleTitle.String, Detail: row.Detail, CreatedAt: row.CreatedAt}
		if row.ReadAt.Valid {
			t := row.ReadAt.Time
			n.ReadAt = &t
		}
		out[i] = n
	}
	return out, nil
}

// LatestID is the id of userID's newest notification (0: none).
func (r *NotificationRepository) LatestID(ctx context.Context, userID int64) (int64, error) {
	id, err := r.q.NotificationStreamLatestID(ctx, r.pool, userID)
	return id, pg.Wrapf(err, "newest notification of %d", userID)
}
