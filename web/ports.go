package web

import (
	"context"

	"inkwell/domain"
	"inkwell/service"
)

//go:generate go tool mockgen -source=ports.go -destination=mocks/ports_mock.go -package=mocks

// UserService is what the account handlers need.
type UserService interface {
	Register(ctx context.Context, in service.RegisterInput) (service.Session, error)
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
