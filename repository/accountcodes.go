package repository

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// The account-code methods of UserRepository: codes mailed to an account (email verification,
// password reset) and what a code proves. Each runs in one unit of work, so a code is spent
// exactly when its effect commits, and a wrong guess is counted even though it changes nothing
// else.

// GetByIDUncached returns the user with id from PostgreSQL, with what the cache does not hold
// (the password hash and whether the email is verified).
func (r *UserRepository) GetByIDUncached(ctx context.Context, id int64) (domain.User, error) {
	row, err := r.q.UserGetByID(ctx, r.pool, id)
	if err != nil {
		return domain.User{}, pg.Wrapf(err, "get user %d", id)
	}
	return userFromRow(row), nil
}

// IssueAccountCode stores the hash of a new code for the account and purpose, sent to email, and
// queues its delivery, together. A code sent less than resend ago is *domain.CodeError
// CodeTooSoon, and nothing changes.
func (r *UserRepository) IssueAccountCode(ctx context.Context, userID int64, purpose domain.AccountCodePurpose, email string,
	codeHash []byte, validity, resend time.Duration, delivery domain.NewJob) error {
	return pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		return r.issueAccountCode(ctx, tx, userID, purpose, email, codeHash, validity, resend, delivery)
	})
}

// IssueAccountCodeIn is IssueAccountCode in the caller's unit of work (a registration's: the
// account and its verification mail commit together).
func (r *UserRepository) IssueAccountCodeIn(ctx context.Context, stx service.Tx, userID int64, purpose domain.AccountCodePurpose, email string,
	codeHash []byte, validity, resend time.Duration, delivery domain.NewJob) error {
	return r.issueAccountCode(ctx, pg.TxOf(stx), userID, purpose, email, codeHash, validity, resend, delivery)
}

func (r *UserRepository) issueAccountCode(ctx context.Context, tx *pg.Tx, userID int64, purpose domain.AccountCodePurpose, email string,
	codeHash []byte, validity, resend time.Duration, delivery domain.NewJob) error {
	_, err := r.q.AccountCodeIssue(ctx, tx, dao.AccountCodeIssueParams{UserID: userID, Purpose: string(purpose), Email: email,
		CodeHash: codeHash, ValidSeconds: validity.Seconds(), ResendSeconds: resend.Seconds()})
	if errors.Is(err, pgx.ErrNoRows) {
		return &domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: resend}
	}
	if err != nil {
		return pg.Wrapf(err, "store %s code", purpose)
	}
	if err := r.q.AccountCodeMissesReset(ctx, tx, dao.AccountCodeMissesResetParams{UserID: userID, Purpose: string(purpose)}); err != nil {
		return pg.Wrapf(err, "reset the wrong guesses of the %s code", purpose)
	}
	_, err = durable.EnqueueTx(ctx, r.q, tx, delivery)
	return err
}

// VerifyEmail spends the account's verification code and marks its email verified, if the email
// is still the one the code went to. A wrong, spent or expired code is
// domain.ErrAccountCodeInvalid, and so is any code from a client that guessed wrong maxAttempts
// times.
func (r *UserRepository) VerifyEmail(ctx context.Context, userID int64, codeHash []byte, client string, maxAttempts int) (domain.User, error) {
	var u domain.User
	valid := false
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		email, ok, err := r.redeem(ctx, tx, userID, domain.PurposeVerifyEmail, codeHash, client, maxAttempts)
		if err != nil || !ok {
			return err // a wrong guess commits its count
		}
		if _, err := r.q.UserMarkEmailVerified(ctx, tx, dao.UserMarkEmailVerifiedParams{ID: userID, Email: email}); err != nil {
			return pg.Wrapf(err, "mark email verified")
		}
		row, err := r.q.UserGetByID(ctx, tx, userID)
		if err != nil {
			return pg.Wrapf(err, "get user %d", userID)
		}
		// Verified now, or before by another proof; unverified means the email changed meanwhile.
		if u, valid = userFromRow(row), row.EmailVerifiedAt.Valid && row.Email == email; !valid {
			return nil
		}
		tx.AfterCommit(func(ctx context.Context) { r.invalidateNow(ctx, userID) })
		return nil
	})
	if err == nil && !valid {
		err = domain.ErrAccountCodeInvalid
	}
	return u, err
}

// ResetPassword spends the account's reset code and, if the account's email is still the one
// the code went to, replaces the password hash with newHash, marks the email verified, and
// revokes every session and API key of the account. It returns the revoked sessions, which the
// caller must still remove from the revocation cache.
func (r *UserRepository) ResetPassword(ctx context.Context, userID int64, codeHash []byte, client string, maxAttempts int, newHash string) ([]string, error) {
	var revoked []string
	valid := false
	err := pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		email, ok, err := r.redeem(ctx, tx, userID, domain.PurposeResetPassword, codeHash, client, maxAttempts)
		if err != nil || !ok {
			return err
		}
		row, err := r.q.UserGetByIDForUpdate(ctx, tx, userID)
		if err != nil {
			return pg.Wrapf(err, "lock user %d", userID)
		}
		if valid = row.Email == email; !valid {
			return nil
		}
		revoked, err = r.replaceCredentials(ctx, tx, userID, newHash)
		return err
	})
	if err == nil && !valid {
		err = domain.ErrAccountCodeInvalid
	}
	return revoked, err
}

// TakeOverUnverified hands an account whose email was never verified to whoever just proved they
// read that email (a code login): a new password hash, the email marked verified, and every
// session and API key revoked, so whoever registered the address before cannot get back in.
// took is false, and nothing changes, when the email is verified already.
func (r *UserRepository) TakeOverUnverified(ctx context.Context, userID int64, newHash string) (revoked []string, took bool, err error) {
	err = pg.InTx(ctx, r.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		row, err := r.q.UserGetByIDForUpdate(ctx, tx, userID)
		if err != nil {
			return pg.Wrapf(err, "lock user %d", userID)
		}
		if took = !row.EmailVerifiedAt.Valid; !took {
			return nil
		}
		revoked, err = r.replaceCredentials(ctx, tx, userID, newHash)
		return err
	})
	return revoked, took, err
}

// replaceCredentials sets a new password hash, marks the email verified and revokes every
// session and API key of the user, in tx.
func (r *UserRepository) replaceCredentials(ctx context.Context, tx *pg.Tx, userID int64, newHash string) ([]string, error) {
	if err := r.q.UserReplaceCredentials(ctx, tx, dao.UserReplaceCredentialsParams{ID: userID, PasswordHash: newHash}); err != nil {
		return nil, pg.Wrapf(err, "replace credentials")
	}
	revoked, err := r.q.SessionRevokeAllOfUser(ctx, tx, userID)
	if err != nil {
		return nil, pg.Wrapf(err, "revoke sessions")
	}
	if err := r.q.APIKeyRevokeAllOfUser(ctx, tx, userID); err != nil {
		return nil, pg.Wrapf(err, "revoke API keys")
	}
	tx.AfterCommit(func(ctx context.Context) { r.invalidateNow(ctx, userID) })
	return revoked, nil
}

// redeem spends the account's code for purpose if codeHash matches a live one, returning the
// address the code was sent to. ok is false for no code, a spent or expired one, any guess from a
// client whose tries at this code are used up, and a wrong guess, which is counted for its client.
// Tries are per client, so whoever guesses wrong five times locks out themselves, never the
// owner; codes have 50 bits, so no number of clients could guess one.
func (r *UserRepository) redeem(ctx context.Context, tx *pg.Tx, userID int64, purpose domain.AccountCodePurpose, codeHash []byte, client string,
	maxAttempts int) (email string, ok bool, err error) {
	key := dao.AccountCodeGetForUpdateParams{UserID: userID, Purpose: string(purpose)}
	row, err := r.q.AccountCodeGetForUpdate(ctx, tx, key) // the row lock serializes the guesses
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, pg.Wrapf(err, "load %s code", purpose)
	}
	if !row.Live {
		return "", false, nil
	}
	byClient := dao.AccountCodeMissesParams{UserID: userID, Purpose: string(purpose), Client: client}
	misses, err := r.q.AccountCodeMisses(ctx, tx, byClient)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", false, pg.Wrapf(err, "load the wrong guesses at the %s code", purpose)
	}
	if int(misses) >= maxAttempts {
		return "", false, nil
	}
	if subtle.ConstantTimeCompare(row.CodeHash, codeHash) != 1 {
		if err := r.q.AccountCodeCountMiss(ctx, tx, dao.AccountCodeCountMissParams(byClient)); err != nil {
			return "", false, pg.Wrapf(err, "count a wrong %s code", purpose)
		}
		err := r.q.AccountCodeCountAttempt(ctx, tx, dao.AccountCodeCountAttemptParams(key))
		return "", false, pg.Wrapf(err, "count a wrong %s code", purpose)
	}
	if err := r.q.AccountCodeSpend(ctx, tx, dao.AccountCodeSpendParams(key)); err != nil {
		return "", false, pg.Wrapf(err, "spend %s code", purpose)
	}
	return row.Email, true, nil
}
