package identities

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// lockScopeIdentities serializes one user's unlinks, so two concurrent unlinks of an account's
// last two ways in cannot both pass the count.
const lockScopeIdentities = "identities"

// Store keeps identities, provider-made accounts, sign-in states and exchange codes.
type Store struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewStore returns the store.
func NewStore(pool *pgxpool.Pool, q dao.Querier) *Store {
	return &Store{pool: pool, q: q}
}

// PutState stores a sign-in under way.
func (s *Store) PutState(ctx context.Context, st domain.SignInState) error {
	link := pgtype.Int8{Int64: st.LinkUserID, Valid: st.LinkUserID != 0}
	err := s.q.SignInStateInsert(ctx, s.pool, dao.SignInStateInsertParams{StateHash: st.StateHash, CookieHash: st.CookieHash,
		Provider: st.Provider, Redirect: st.Redirect, LinkUserID: link, CreatedAt: st.CreatedAt, ExpiresAt: st.ExpiresAt})
	return pg.Wrapf(err, "store sign-in state")
}

// TakeState consumes the state with stateHash bound to cookieHash, unexpired at now; another
// caller, a wrong cookie or an expired state finds domain.ErrNotFound.
func (s *Store) TakeState(ctx context.Context, stateHash, cookieHash []byte, now time.Time) (domain.SignInState, error) {
	row, err := s.q.SignInStateTake(ctx, s.pool, dao.SignInStateTakeParams{StateHash: stateHash, CookieHash: cookieHash, Now: now})
	if err != nil {
		return domain.SignInState{}, pg.Wrapf(err, "take sign-in state")
	}
	return domain.SignInState{StateHash: row.StateHash, CookieHash: row.CookieHash, Provider: row.Provider, Redirect: row.Redirect,
		LinkUserID: row.LinkUserID.Int64, CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt}, nil
}

// PutCode stores an exchange code's hash for userID until expires.
func (s *Store) PutCode(ctx context.Context, codeHash []byte, userID int64, now, expires time.Time) error {
	err := s.q.SignInCodeInsert(ctx, s.pool, dao.SignInCodeInsertParams{CodeHash: codeHash, UserID: userID, CreatedAt: now, ExpiresAt: expires})
	return pg.Wrapf(err, "store sign-in code")
}

// TakeCode consumes the exchange code and returns its user; a spent, unknown or expired code is
// domain.ErrNotFound.
func (s *Store) TakeCode(ctx context.Context, codeHash []byte, now time.Time) (int64, error) {
	id, err := s.q.SignInCodeTake(ctx, s.pool, dao.SignInCodeTakeParams{CodeHash: codeHash, Now: now})
	return id, pg.Wrapf(err, "take sign-in code")
}

// FindBySubject returns the identity (provider, subject), or domain.ErrNotFound.
func (s *Store) FindBySubject(ctx context.Context, provider, subject string) (domain.UserIdentity, error) {
	row, err := s.q.UserIdentityGetBySubject(ctx, s.pool, dao.UserIdentityGetBySubjectParams{Provider: provider, Subject: subject})
	if err != nil {
		return domain.UserIdentity{}, pg.Wrapf(err, "get identity")
	}
	return identityFromRow(row), nil
}

// Touch records a sign-in through the identity.
func (s *Store) Touch(ctx context.Context, id int64, now time.Time) error {
	return pg.Wrapf(s.q.UserIdentityTouch(ctx, s.pool, dao.UserIdentityTouchParams{ID: id, Now: now}), "touch identity %d", id)
}

// LinkIn links ident to its user in the caller's unit of work; an identity another account holds
// is domain.ErrIdentityInUse, and leaves tx usable.
func (s *Store) LinkIn(ctx context.Context, stx service.Tx, ident domain.UserIdentity) (domain.UserIdentity, error) {
	var row dao.UserIdentity
	err := pg.TxOf(stx).Savepoint(ctx, func(db pgx.Tx) error {
		var err error
		row, err = s.q.UserIdentityInsert(ctx, db, dao.UserIdentityInsertParams{UserID: ident.UserID, Provider: ident.Provider,
			Subject: ident.Subject, Email: ident.Email})
		return err
	})
	if err != nil {
		return domain.UserIdentity{}, pg.Wrapf(err, "link identity")
	}
	return identityFromRow(row), nil
}

// Link is LinkIn in a unit of work of its own.
func (s *Store) Link(ctx context.Context, ident domain.UserIdentity) (domain.UserIdentity, error) {
	var out domain.UserIdentity
	err := pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		var err error
		out, err = s.LinkIn(ctx, tx, ident)
		return err
	})
	return out, err
}

// MarkProviderAccountIn records, in the account's unit of work, that a provider made userID with
// the password hash placeholderHash (nobody knows its password), and marks its email verified
// when the provider verified it.
func (s *Store) MarkProviderAccountIn(ctx context.Context, stx service.Tx, userID int64, placeholderHash string, emailVerified bool, now time.Time) error {
	tx := pg.TxOf(stx)
	if err := s.q.ProviderAccountInsert(ctx, tx, dao.ProviderAccountInsertParams{UserID: userID, PlaceholderHash: placeholderHash}); err != nil {
		return pg.Wrapf(err, "record provider account %d", userID)
	}
	if !emailVerified {
		return nil
	}
	return pg.Wrapf(s.q.UserIdentityMarkEmailVerified(ctx, tx, dao.UserIdentityMarkEmailVerifiedParams{UserID: userID, Now: now}),
		"mark email of user %d verified", userID)
}

// List returns the user's identities, oldest first.
func (s *Store) List(ctx context.Context, userID int64) ([]domain.UserIdentity, error) {
	rows, err := s.q.UserIdentityListByUser(ctx, s.pool, userID)
	if err != nil {
		return nil, pg.Wrapf(err, "list identities of user %d", userID)
	}
	out := make([]domain.UserIdentity, len(rows))
	for i, r := range rows {
		out[i] = identityFromRow(r)
	}
	return out, nil
}

// Unlink deletes the user's identity id unless it is the account's only way left to sign in (no
// password its owner set, no other identity): then domain.ErrLastSignInWay. Another user's or an
// unknown id is domain.ErrNotFound.
func (s *Store) Unlink(ctx context.Context, userID, id int64) error {
	return pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		if err := s.q.UserLockScope(ctx, tx, dao.UserLockScopeParams{Scope: lockScopeIdentities, UserID: userID}); err != nil {
			return pg.Wrapf(err, "lock identities of user %d", userID)
		}
		n, err := s.q.UserIdentityCountByUser(ctx, tx, userID)
		if err != nil {
			return pg.Wrapf(err, "count identities of user %d", userID)
		}
		hasPassword, err := s.q.ProviderAccountHasPassword(ctx, tx, userID)
		if err != nil {
			return pg.Wrapf(err, "password of user %d", userID)
		}
		deleted, err := s.q.UserIdentityDelete(ctx, tx, dao.UserIdentityDeleteParams{ID: id, UserID: userID})
		switch {
		case err != nil:
			return pg.Wrapf(err, "unlink identity %d", id)
		case deleted == 0:
			return domain.ErrNotFound
		case n <= 1 && !hasPassword.Bool:
			return domain.ErrLastSignInWay // rolls the delete back
		}
		return nil
	})
}

func identityFromRow(r dao.UserIdentity) domain.UserIdentity {
	return domain.UserIdentity{ID: r.ID, UserID: r.UserID, Provider: r.Provider, Subject: r.Subject, Email: r.Email,
		CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt}
}
