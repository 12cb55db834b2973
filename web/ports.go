package web

import (
	"context"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

//go:generate go tool mockgen -source=ports.go -destination=mocks/ports_mock.go -package=mocks

// UserService is what the account handlers need.
type UserService interface {
	Register(ctx context.Context, in service.RegisterInput) (service.Session, error)
	RegisterIdempotent(ctx context.Context, in service.RegisterInput, idem service.Idempotent[service.Session]) (domain.StoredResponse, bool, error)
	Login(ctx context.Context, email, password string) (service.Session, error)
	Authenticate(ctx context.Context, token string) (int64, error)
	Current(ctx context.Context, userID int64) (domain.User, error)
	Update(ctx context.Context, userID int64, in service.UpdateUserInput) (domain.User, error)
}

// ProfileService is what the profile handlers need.
type ProfileService interface {
	Get(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
	Follow(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
	Unfollow(ctx context.Context, viewerID int64, username string) (domain.Profile, error)
}

// ArticleService is what the article handlers need.
type ArticleService interface {
	Create(ctx context.Context, viewerID int64, in service.CreateArticleInput) (domain.ArticleView, error)
	CreateIdempotent(ctx context.Context, viewerID int64, in service.CreateArticleInput, idem service.Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error)
	Get(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Update(ctx context.Context, viewerID int64, slug string, in service.UpdateArticleInput) (domain.ArticleView, error)
	Publish(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Withdraw(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Delete(ctx context.Context, viewerID int64, slug string) error
	Favorite(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	Unfavorite(ctx context.Context, viewerID int64, slug string) (domain.ArticleView, error)
	List(ctx context.Context, viewerID int64, in service.ListInput) (service.ArticleList, error)
	Feed(ctx context.Context, viewerID int64, p domain.Page) (service.ArticleList, error)
	Mine(ctx context.Context, viewerID int64, status domain.ArticleStatus, p domain.Page) (service.ArticleList, error)
	Tags(ctx context.Context) ([]string, error)
}

// CommentService is what the comment handlers need.
type CommentService interface {
	Add(ctx context.Context, viewerID int64, slug, body string) (domain.CommentView, error)
	AddIdempotent(ctx context.Context, viewerID int64, slug, body string, idem service.Idempotent[domain.CommentView]) (domain.StoredResponse, bool, error)
	List(ctx context.Context, viewerID int64, slug string, afterSeq int64, limit int) ([]domain.CommentView, error)
	Delete(ctx context.Context, viewerID int64, slug string, commentID int64) error
}

// CollectionService is what the collection handlers need.
type CollectionService interface {
	Create(ctx context.Context, viewerID int64, in service.CollectionInput) (domain.Collection, error)
	List(ctx context.Context, viewerID int64) ([]domain.Collection, error)
	Update(ctx context.Context, viewerID, id int64, in service.CollectionInput) (domain.Collection, error)
	Delete(ctx context.Context, viewerID, id int64) error
	Collect(ctx context.Context, viewerID int64, slug string, collectionID int64) (domain.ArticleView, error)
	Uncollect(ctx context.Context, viewerID int64, slug string, collectionID int64) (domain.ArticleView, error)
	Articles(ctx context.Context, viewerID, id int64, p domain.Page) (service.ArticleList, error)
}

// HistoryService is what the reading-history handler needs.
type HistoryService interface {
	History(ctx context.Context, viewerID int64, p domain.Page) (service.ArticleList, error)
}

// HotService is what the hot-list handler needs.
type HotService interface {
	Hot(ctx context.Context, viewerID int64, limit int) ([]service.HotView, error)
}

// NotificationService is what the notification handlers need.
type NotificationService interface {
	List(ctx context.Context, viewerID int64, p domain.Page) (service.NotificationList, error)
	MarkRead(ctx context.Context, viewerID int64, ids []int64) (int64, error)
}

// CodeLoginService is what the one-time code login handlers need.
type CodeLoginService interface {
	Send(ctx context.Context, email, phone string) error
	Login(ctx context.Context, email, phone, code string) (service.Session, error)
}

// SessionService is what the session and API-key handlers need.
type SessionService interface {
	Refresh(ctx context.Context, refresh string) (int64, domain.Tokens, error)
	Logout(ctx context.Context, accessToken string) error
	CreateAPIKey(ctx context.Context, userID int64, name string) (domain.APIKey, string, error)
	ListAPIKeys(ctx context.Context, userID int64) ([]domain.APIKey, error)
	RevokeAPIKey(ctx context.Context, userID, id int64) error
}

// RateLimiter counts a request against a limit per window.
type RateLimiter interface {
	Allow(ctx context.Context, key string, limit int, window time.Duration) (domain.RateDecision, error)
}
