package domain

import (
	"strconv"
	"time"
)

// Topics of the article events the outbox carries.
const (
	TopicArticlePublished = "article.published"
	TopicArticleWithdrawn = "article.withdrawn"
	TopicArticleDeleted   = "article.deleted"
)

// OutboxEvent is an event written in the same transaction as the change it describes.
type OutboxEvent struct {
	ID          int64
	Topic       string
	AggregateID int64
	Payload     []byte
	Generation  int64
	// TraceParent is the W3C traceparent of the span that wrote the event ("" when tracing was
	// off); the relay publishes it with the event, so its consumer joins the writer's trace.
	TraceParent string
}

// EventID is the id consumers deduplicate by.
func (e OutboxEvent) EventID() string { return outboxEventPrefix + strconv.FormatInt(e.ID, 10) }

// ArticleEvent is the payload of the article topics.
type ArticleEvent struct {
	ArticleID int64  `json:"articleId"`
	AuthorID  int64  `json:"authorId"`
	Slug      string `json:"slug"`
	Title     string `json:"title"`
	// At is when the event happened (PostgreSQL's clock at the write); zero in events written
	// before it was recorded.
	At time.Time `json:"at,omitzero"`
}

// Notification is something a user is told about.
type Notification struct {
	ID            int64
	Kind          string // e.g. TopicArticlePublished
	ActorUsername string
	// ArticleSlug and ArticleTitle are the article's as it is now, and empty while the reader may
	// not see it (withdrawn, back to draft, deleted).
	ArticleSlug  string
	ArticleTitle string
	// Detail says in words what a notice (a moderation action, a resolved report) is about.
	Detail    string
	CreatedAt time.Time
	ReadAt    *time.Time
}

// UserNotification is a notification with the user it is for (a live stream's fan-out).
type UserNotification struct {
	UserID int64
	Notification
}
