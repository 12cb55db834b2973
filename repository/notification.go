package repository

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// fanOutPage is how many followers one INSERT notifies: a famous author's millions of followers
// are notified page by page instead of in one giant statement.
const fanOutPage = 1000

// NotificationRepository stores notifications.
type NotificationRepository struct {
	pool *pgxpool.Pool
	q    dao.Querier
	pub  NotificationPublisher // nil: nobody is told (notification_stream.go)

	afterOnce  sync.Once
	afterBatch *keyedBatcher[struct{}, afterRequest, []domain.Notification] // notification_stream.go
}

// NewNotificationRepository returns the repository.
func NewNotificationRepository(pool *pgxpool.Pool, q dao.Querier) *NotificationRepository {
	return &NotificationRepository{pool: pool, q: q}
}

// NotifyFollowers tells every follower of actorID about the publication of articleID, once: the
// event id goes into the inbox under consumer in the same transaction as the notifications, so a
// redelivered event finds itself there and changes nothing. The article itself is announced once
// (article_fanouts, claimed in that transaction): only if it is published when the event is
// applied, and never again after a withdraw/publish cycle, whatever order the events arrive in.
// The outbox row of the event is marked applied in that transaction too (whatever the claim
// decides), so the outbox never re-drives an event whose effect committed. It returns how many
// followers were notified.
func (r *NotificationRepository) NotifyFollowers(ctx context.Context, consumer, eventID, kind string, actorID, articleID int64, at time.Time) (int, error) {
	eventAt := pgtype.Timestamptz{Time: at, Valid: !at.IsZero()}
	notified := 0
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		fresh, err := r.q.InboxInsert(ctx, tx, dao.InboxInsertParams{Consumer: consumer, EventID: eventID})
		if err != nil {
			return pg.Wrapf(err, "record event %s", eventID)
		}
		if err := durable.MarkOutboxApplied(ctx, r.q, tx, eventID); err != nil {
			return err
		}
		if fresh == 0 {
			return nil // applied before
		}
		claimed, err := r.q.ArticleFanoutClaim(ctx, tx, articleID)
		if err != nil {
			return pg.Wrapf(err, "claim the announcement of article %d", articleID)
		}
		if claimed == 0 {
			return nil // not published now, or announced before: the inbox record alone commits
		}
		// What the notifications show besides their rows, for the live streams' announcement.
		parts, err := r.q.NotificationFanOutRender(ctx, tx, dao.NotificationFanOutRenderParams{ActorID: actorID, ArticleID: articleID})
		if err != nil {
			return pg.Wrapf(err, "render the notifications of article %d", articleID)
		}
		after := int64(0)
		var written []dao.NotificationFanOutRow
		var users []int64 // past announceCarryMax notifications: their users alone
		for {
			rows, err := r.q.NotificationFanOut(ctx, tx, dao.NotificationFanOutParams{
				Kind: kind, ActorID: actorID, ArticleID: articleID, EventID: eventID, EventAt: eventAt, AfterFollower: after, Lim: fanOutPage,
			})
			if err != nil {
				return pg.Wrapf(err, "notify followers of %d", actorID)
			}
			notified += len(rows)
			if users == nil && len(written)+len(rows) <= announceCarryMax {
				written = append(written, rows...)
			} else {
				for _, row := range append(written, rows...) {
					users = append(users, row.UserID)
				}
				written = nil
			}
			if len(rows) < fanOutPage {
				if users != nil {
					r.announce(tx, users)
				} else {
					r.announceWith(tx, kind, parts, written)
				}
				return nil
			}
			for _, row := range rows {
				after = max(after, row.UserID)
			}
		}
	})
	return notified, err
}

// Ignore records that consumer saw eventID, a topic it has nothing to do for: the outbox event
// is done and never re-driven.
func (r *NotificationRepository) Ignore(ctx context.Context, consumer, eventID string) error {
	return durable.MarkOutboxApplied(ctx, r.q, r.pool, eventID)
}

// List returns userID's notifications, newest first, after the cursor (created at, id).
func (r *NotificationRepository) List(ctx context.Context, userID int64, after *domain.Cursor, limit int) ([]domain.Notification, error) {
	before := cursorOrFirst(after)
	p := dao.NotificationListParams{UserID: userID, Lim: int32(limit), BeforeCreatedAt: before.CreatedAt, BeforeID: before.ID}
	rows, err := r.q.NotificationList(ctx, r.pool, p)
	if err != nil {
		return nil, pg.Wrapf(err, "list notifications of %d", userID)
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

// MarkRead marks the given notifications of userID read (all of them when ids is empty) and
// returns how many changed.
func (r *NotificationRepository) MarkRead(ctx context.Context, userID int64, ids []int64) (int64, error) {
	if ids == nil {
		ids = []int64{}
	}
	n, err := r.q.NotificationMarkRead(ctx, r.pool, dao.NotificationMarkReadParams{UserID: userID, Ids: ids})
	return n, pg.Wrapf(err, "mark notifications of %d read", userID)
}

// Unread counts userID's unread notifications.
func (r *NotificationRepository) Unread(ctx context.Context, userID int64) (int64, error) {
	n, err := r.q.NotificationUnreadCount(ctx, r.pool, userID)
	return n, pg.Wrapf(err, "count unread notifications of %d", userID)
}
