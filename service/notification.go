package service

import (
	"context"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=notification.go -destination=mocks/notification_mock.go -package=mocks

// NotificationRepository stores notifications.
type NotificationRepository interface {
	// NotifyFollowers notifies every follower of actorID of eventID, the publication of
	// articleID, once, deduplicated under consumer, and returns how many were notified. It
	// rechecks the article in the unit of work that writes the notifications: an article that is
	// not published then, or whose followers an earlier publication already notified, notifies
	// nobody. at dates the notifications (the event's time; zero: now).
	NotifyFollowers(ctx context.Context, consumer, eventID, kind string, actorID, articleID int64, at time.Time) (int, error)
	// Ignore records that consumer saw eventID and has nothing to do for it, so the event's
	// source (the outbox) counts it as applied and does not deliver it again.
	Ignore(ctx context.Context, consumer, eventID string) error
	// List returns a page of userID's notifications, newest first. A notification of an article
	// that is not published now comes without its slug and title.
	List(ctx context.Context, userID int64, after *domain.Cursor, limit int) ([]domain.Notification, error)
	MarkRead(ctx context.Context, userID int64, ids []int64) (int64, error)
	Unread(ctx context.Context, userID int64) (int64, error)
}

// NotificationService turns article events into notifications and serves them.
type NotificationService struct {
	repo NotificationRepository
}

// NewNotificationService returns the service.
func NewNotificationService(repo NotificationRepository) *NotificationService {
	return &NotificationService{repo: repo}
}

// OnArticleEvent applies one outbox event: the first publication of an article notifies the
// author's followers, if the article is still published when the event is applied. Other topics
// notify nobody (yet): a withdrawal needs no event of its own, a withdrawn article's notifications
// stop showing it.
func (s *NotificationService) OnArticleEvent(ctx context.Context, consumer, eventID, topic string, ev domain.ArticleEvent) error {
	if topic != domain.TopicArticlePublished {
		return s.repo.Ignore(ctx, consumer, eventID)
	}
	_, err := s.repo.NotifyFollowers(ctx, consumer, eventID, topic, ev.AuthorID, ev.ArticleID, ev.At)
	return err
}

// NotificationList is one page of notifications.
type NotificationList struct {
	Items      []domain.Notification
	Unread     int64
	NextCursor *domain.Cursor
}

// List returns viewerID's notifications, newest first.
func (s *NotificationService) List(ctx context.Context, viewerID int64, p domain.Page) (NotificationList, error) {
	items, err := s.repo.List(ctx, viewerID, p.Cursor, p.Limit+1)
	if err != nil {
		return NotificationList{}, err
	}
	items, more := domain.CutPage(items, p.Limit)
	unread, err := s.repo.Unread(ctx, viewerID)
	if err != nil {
		return NotificationList{}, err
	}
	out := NotificationList{Items: items, Unread: unread}
	if more {
		last := items[len(items)-1]
		out.NextCursor = &domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return out, nil
}

// MarkRead marks viewerID's notifications ids read (all when ids is empty).
func (s *NotificationService) MarkRead(ctx context.Context, viewerID int64, ids []int64) (int64, error) {
	if len(ids) > 1000 {
		return 0, domain.NewValidationError("ids", "too many at once (maximum is 1000)")
	}
	return s.repo.MarkRead(ctx, viewerID, ids)
}
