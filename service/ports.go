package service

import (
	"context"

	"inkwell/domain"
)

//go:generate go tool mockgen -source=ports.go -destination=mocks/ports_mock.go -package=mocks

// UserRepository stores accounts. Implementations return domain.ErrNotFound for a missing user,
// domain.ErrEmailTaken / domain.ErrUsernameTaken when a uniqueness rule is violated.
type UserRepository interface {
	Create(ctx context.Context, u domain.User) (domain.User, error)
	GetByID(ctx context.Context, id int64) (domain.User, error)
	GetByEmail(ctx context.Context, email string) (domain.User, error)
	GetByUsername(ctx context.Context, username string) (domain.User, error)
	// Update loads the user, applies change to it inside one transaction and stores the result.
	// An error from change aborts the transaction and is returned unchanged.
	Update(ctx context.Context, id int64, change func(*domain.User) error) (domain.User, error)
	// ReplacePasswordHash swaps the stored hash only if it still equals oldHash, so a rehash on
	// login can never overwrite a password changed concurrently.
	ReplacePasswordHash(ctx context.Context, id int64, oldHash, newHash string) error
}

// FollowRepository stores who follows whom. Follow and Unfollow are idempotent.
type FollowRepository interface {
	Follow(ctx context.Context, followerID, followeeID int64) error
	Unfollow(ctx context.Context, followerID, followeeID int64) error
	IsFollowing(ctx context.Context, followerID, followeeID int64) (bool, error)
}

// PasswordHasher hashes and verifies passwords. Verify reports needsRehash when the stored hash
// was made with weaker parameters than the hasher's current ones.
type PasswordHasher interface {
	Hash(password string) (string, error)
	Verify(password, encoded string) (match, needsRehash bool, err error)
}

// TokenManager issues and verifies access tokens. Verify returns domain.ErrUnauthorized for any
// token that is not acceptable, whatever the reason.
type TokenManager interface {
	Issue(userID int64) (string, error)
	Verify(token string) (userID int64, err error)
}
