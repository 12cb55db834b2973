package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=account.go -destination=mocks/account_mock.go -package=mocks

// AccountCodeRepository stores the codes mailed to accounts and applies what they prove
// (repository.UserRepository).
type AccountCodeRepository interface {
	// GetByIDUncached reads the user from the system of record, with EmailVerified.
	GetByIDUncached(ctx context.Context, id int64) (domain.User, error)
	GetByEmail(ctx context.Context, email string) (domain.User, error)
	// IssueAccountCode stores codeHash and queues delivery together, or returns *domain.CodeError
	// CodeTooSoon within resend of the previous code.
	IssueAccountCode(ctx context.Context, userID int64, purpose domain.AccountCodePurpose, email string, codeHash []byte,
		validity, resend time.Duration, delivery domain.NewJob) error
	// VerifyEmail spends the verification code and marks the email verified, or returns
	// domain.ErrAccountCodeInvalid.
	VerifyEmail(ctx context.Context, userID int64, codeHash []byte, maxAttempts int) (domain.User, error)
	// ResetPassword spends the reset code, sets newHash, marks the email verified and revokes every
	// session and API key, returning the revoked sessions; or domain.ErrAccountCodeInvalid.
	ResetPassword(ctx context.Context, userID int64, codeHash []byte, maxAttempts int, newHash string) ([]string, error)
	// TakeOverUnverified does what ResetPassword does, without a code, to an account whose email
	// is not verified; took is false for a verified one.
	TakeOverUnverified(ctx context.Context, userID int64, newHash string) (revoked []string, took bool, err error)
}

// RevocationRecorder makes sessions that PostgreSQL has revoked unusable on every instance
// (SessionService.RecordRevoked).
type RevocationRecorder interface {
	RecordRevoked(ctx context.Context, sessionIDs []string)
}

// Account mail delivery job, run by job.SendAccountMailHandler.
const JobKindSendAccountMail = "send_account_mail"

// AccountMailPayload is the send_account_mail job's payload. It carries the code sealed to the
// address (CodeKeys.Seal), since the mail must contain it, and its job row is deleted once done;
// the account_codes row holds only the code's hash.
type AccountMailPayload struct {
	Purpose    string `json:"purpose"`
	Address    string `json:"address"`
	SealedCode string `json:"sealedCode"`
}

// AccountService verifies emails and resets passwords with codes sent by email, and hands an
// unverified account to whoever proves they own its email.
type AccountService struct {
	repo     AccountCodeRepository
	hasher   PasswordHasher
	sessions RevocationRecorder
	keys     CodeKeys // seals the code in the delivery job
	log      *slog.Logger
}

// NewAccountService returns the service.
func NewAccountService(repo AccountCodeRepository, hasher PasswordHasher, sessions RevocationRecorder, keys CodeKeys, log *slog.Logger) *AccountService {
	return &AccountService{repo: repo, hasher: hasher, sessions: sessions, keys: keys, log: log}
}

// SendVerification mails a verification code to the user's email. A verified email, or an
// account without a mailbox, is a validation error; another send within a minute is
// *domain.CodeError CodeTooSoon.
func (s *AccountService) SendVerification(ctx context.Context, userID int64) error {
	u, err := s.repo.GetByIDUncached(ctx, userID)
	if err != nil {
		return err
	}
	switch {
	case !domain.HasMailbox(u.Email):
		return domain.NewValidationError("email", "has no mailbox: this account signs in by phone")
	case u.EmailVerified:
		return domain.NewValidationError("email", "is already verified")
	}
	return s.issue(ctx, u, domain.PurposeVerifyEmail, domain.VerifyEmailValidity)
}

// SendVerificationAfterRegister is SendVerification for an account just created: a failure is
// logged, not returned, since the account exists and the user can ask again.
func (s *AccountService) SendVerificationAfterRegister(ctx context.Context, userID int64) {
	if err := s.SendVerification(ctx, userID); err != nil {
		s.log.WarnContext(ctx, "verification email for a new account not queued; the user can ask for another", "user_id", userID, "err", err)
	}
}

// VerifyEmail marks the user's email verified if code is the one last mailed to it.
func (s *AccountService) VerifyEmail(ctx context.Context, userID int64, code string) (domain.User, error) {
	hash, ok := domain.HashAccountCode(code)
	if !ok {
		return domain.User{}, domain.ErrAccountCodeInvalid
	}
	return s.repo.VerifyEmail(ctx, userID, hash, domain.AccountCodeAttempts)
}

// RequestPasswordReset mails a reset code to the account with email, if there is one. Whether
// there is, and whether a code was sent within the last minute, is never told: nil either way.
func (s *AccountService) RequestPasswordReset(ctx context.Context, email string) error {
	email = domain.NormalizeEmail(email)
	v := &domain.ValidationError{}
	domain.ValidateEmail(v, email)
	if err := v.OrNil(); err != nil {
		return err
	}
	u, err := s.repo.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !domain.HasMailbox(u.Email)) {
		return nil
	}
	if err != nil {
		return err
	}
	err = s.issue(ctx, u, domain.PurposeResetPassword, domain.ResetPasswordValidity)
	if IsCodeError(err) {
		return nil // too soon: the code sent a moment ago is still good
	}
	return err
}

// ConfirmPasswordReset sets a new password for the account with email if code is its live reset
// code, and ends every session and API key of the account. An unknown email and a wrong code
// are the same domain.ErrAccountCodeInvalid.
func (s *AccountService) ConfirmPasswordReset(ctx context.Context, email, code, password string) error {
	email = domain.NormalizeEmail(email)
	v := &domain.ValidationError{}
	if email == "" {
		v.Add("email", "can't be blank")
	}
	if code == "" {
		v.Add("code", "can't be blank")
	}
	domain.ValidatePassword(v, password)
	if err := v.OrNil(); err != nil {
		return err
	}
	hash, ok := domain.HashAccountCode(code)
	if !ok {
		return domain.ErrAccountCodeInvalid
	}
	u, err := s.repo.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ErrAccountCodeInvalid
	}
	if err != nil {
		return err
	}
	newHash, err := s.hasher.Hash(password)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	revoked, err := s.repo.ResetPassword(ctx, u.ID, hash, domain.AccountCodeAttempts, newHash)
	if err != nil {
		return err
	}
	s.sessions.RecordRevoked(ctx, revoked)
	return nil
}

// ClaimByCodeLogin is called when a code login proved that its user reads u's email. If that
// email was never verified, someone else may have registered it (a pre-account takeover): the
// account is taken over cleanly, with a random password nobody knows, every session and API key
// revoked, and the email marked verified. Phone logins and verified emails change nothing.
// randomHash is the hash of a random password the code login made anyway (for a new account), so
// the takeover costs no second password hash.
func (s *AccountService) ClaimByCodeLogin(ctx context.Context, channel string, u domain.User, randomHash string) error {
	if channel != "email" || u.EmailVerified {
		return nil
	}
	revoked, took, err := s.repo.TakeOverUnverified(ctx, u.ID, randomHash)
	if err != nil {
		return err
	}
	if took && len(revoked) > 0 {
		s.log.InfoContext(ctx, "code login took over an account with an unverified email: its password was replaced and its sessions and keys revoked",
			"user_id", u.ID, "sessions_revoked", len(revoked))
	}
	s.sessions.RecordRevoked(ctx, revoked)
	return nil
}

func (s *AccountService) issue(ctx context.Context, u domain.User, purpose domain.AccountCodePurpose, validity time.Duration) error {
	code := domain.NewAccountCode()
	hash, _ := domain.HashAccountCode(code)
	sealed, err := s.keys.Seal(u.Email, code)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(AccountMailPayload{Purpose: string(purpose), Address: u.Email, SealedCode: sealed})
	if err != nil {
		return err
	}
	job := domain.NewJob{Queue: QueueDefault, Kind: JobKindSendAccountMail, Payload: payload, MaxAttempts: 5, DeleteWhenDone: true}
	return s.repo.IssueAccountCode(ctx, u.ID, purpose, u.Email, hash, validity, domain.AccountCodeResend, job)
}
