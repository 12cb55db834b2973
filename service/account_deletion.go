package service

import (
	"context"
	"strings"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=account_deletion.go -destination=mocks/account_deletion_mock.go -package=mocks

// AccountStore deletes accounts (repository.AccountEraser).
type AccountStore interface {
	// HoldIn holds the row of the account named username in tx until tx ends;
	// domain.ErrNotFound when there is no such user.
	HoldIn(ctx context.Context, tx Tx, username string) (domain.User, error)
	// EraseIn deletes the held account u and everything that is its own in tx, and drops the
	// cache entries that showed it once tx has committed.
	EraseIn(ctx context.Context, tx Tx, u domain.User) (domain.ErasedAccount, error)
}

// SessionEnder ends every session and API key of a user in a unit of work; each ended session is
// refused on every instance once it has committed (SessionService.RevokeAllIn).
type SessionEnder interface {
	RevokeAllIn(ctx context.Context, tx Tx, userID int64, keep string, keys bool) error
}

// AccountDeletion deletes accounts for an operator (inkwell users delete).
//
// What goes: the user, their articles in every status (with everyone's comments, likes and counts
// on them, their tags and search words), the comments they wrote anywhere, their likes (the liked
// articles' counts go down), their folders (the collected articles' counts go down), follows both
// ways, reading history, notifications, sessions, API keys, account codes and stored
// Idempotency-Key answers. Their sessions are revoked in the same unit of work and refused on
// every instance before Delete returns; API keys are checked in PostgreSQL on each use, so they
// stop at the commit. Notifications others got from or about the account go with it too. Kept:
// the read counts of articles it read (the reads happened).
type AccountDeletion struct {
	uow      UnitOfWork
	accounts AccountStore
	sessions SessionEnder
}

// NewAccountDeletion returns the use case.
func NewAccountDeletion(uow UnitOfWork, accounts AccountStore, sessions SessionEnder) *AccountDeletion {
	return &AccountDeletion{uow: uow, accounts: accounts, sessions: sessions}
}

// Delete deletes the account named username (case-insensitive).
func (s *AccountDeletion) Delete(ctx context.Context, username string) (domain.ErasedAccount, error) {
	username = strings.TrimSpace(username)
	if username == "" {
		return domain.ErasedAccount{}, domain.NewValidationError("username", "can't be blank")
	}
	// One unit of work: the sessions end while the account's row is held, and with it.
	var gone domain.ErasedAccount
	err := s.uow.InTx(ctx, func(tx Tx) error {
		u, err := s.accounts.HoldIn(ctx, tx, username)
		if err != nil {
			return err
		}
		if err := s.sessions.RevokeAllIn(ctx, tx, u.ID, "", true); err != nil {
			return err
		}
		gone, err = s.accounts.EraseIn(ctx, tx, u)
		return err
	})
	if err != nil {
		return domain.ErasedAccount{}, err
	}
	return gone, nil
}
