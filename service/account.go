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
	// IssueAccountCodeIn is IssueAccountCode in the caller's unit of work.
	IssueAccountCodeIn(ctx context.Context, tx Tx, userID int64, purpose domain.AccountCodePurpose, email string, codeHash []byte,
		validity, resend time.Duration, delivery domain.NewJob) error
	// VerifyEmail spends the verification code and marks the email verified, or returns
	// domain.ErrAccountCodeInvalid. Wrong guesses count per client: one that made maxAttempts of
	// them may not try this code again, anyone else still may.
	VerifyEmail(ctx context.Context, userID int64, codeHash []byte, client string, maxAttempts int) (domain.User, error)
	// ResetPassword spends the reset code, sets newHash, marks the email verified and revokes every
	// session and API key, returning the revoked sessions; or domain.ErrAccountCodeInvalid. Wrong
	// guesses count per client, as VerifyEmail's.
	ResetPassword(ctx context.Context, userID int64, codeHash []byte, client string, maxAttempts int, newHash string) ([]string, error)
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
	SealedCode string `json:"sealedCode,omitempty"`
	// Provider is the display name of the provider an identity_linked notice tells of (no code).
	Provider string `json:"provider,omitempty"`
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

// IssueVerificationIn issues the verification code of u, an account being created in tx, and
// queues its mail in tx too: the account and its mail commit together or not at all.
func (s *AccountService) IssueVerificationIn(ctx context.Context, tx Tx, u domain.User) error {
	hash, job, err := s.prepare(u, domain.PurposeVerifyEmail)
	if err != nil {
		return err
	}
	return s.repo.IssueAccountCodeIn(ctx, tx, u.ID, domain.PurposeVerifyEmail, u.Email, hash, domain.VerifyEmailValidity, domain.AccountCodeResend, job)
}

// VerifyEmail marks the user's email verified if code is the one last mailed to it.
func (s *AccountService) VerifyEmail(ctx context.Context, userID int64, code string) (domain.User, error) {
	hash, ok := domain.HashAccountCode(code)
	if !ok {
		return domain.User{}, domain.ErrAccountCodeInvalid
	}
	return s.repo.VerifyEmail(ctx, userID, hash, requesterOf(ctx), domain.AccountCodeAttempts)
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
// are the same domain.ErrAccountCodeInvalid, after the same work: the password is hashed either
// way, so the answer's timing does not tell which emails have accounts.
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
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	newHash, herr := s.hasher.Hash(password)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ErrAccountCodeInvalid
	}
	if herr != nil {
		return fmt.Errorf("hash password: %w", herr)
	}
	revoked, err := s.repo.ResetPassword(ctx, u.ID, hash, requesterOf(ctx), domain.AccountCodeAttempts, newHash)
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
	hash, job, err := s.prepare(u, purpose)
	if err != nil {
		return err
	}
	return s.repo.IssueAccountCode(ctx, u.ID, purpose, u.Email, hash, validity, domain.AccountCodeResend, job)
}

// prepare makes a code for u and purpose: its hash, and the job that mails it, sealed, to u's
// address as stored (never to a spelling someone typed).
func (s *AccountService) prepare(u domain.User, purpose domain.AccountCodePurpose) ([]byte, domain.NewJob, error) {
	code := domain.NewAccountCode()
	hash, _ := domain.HashAccountCode(code)
	sealed, err := s.keys.Seal(u.Email, code)
	if err != nil {
		return nil, domain.NewJob{}, err
	}
	payload, err := json.Marshal(AccountMailPayload{Purpose: string(purpose), Address: u.Email, SealedCode: sealed})
	if err != nil {
		return nil, domain.NewJob{}, err
	}
	return hash, domain.NewJob{Queue: QueueDefault, Kind: JobKindSendAccountMail, Payload: payload, MaxAttempts: 5, DeleteWhenDone: true}, nil
}
