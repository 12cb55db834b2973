package service

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=codelogin.go -destination=mocks/codelogin_mock.go -package=mocks

// CodeStore keeps one-time codes as hashes (see CodeKeys.Hash) and meters them: Put refuses a
// send over the global rate, within the resend interval, past the target's daily cap or while its
// failure budget is used up (a *domain.CodeError with RetryAfter); Check returns nil for the right
// code, a *domain.CodeError CodeLocked while the target's failure budget is used up, and
// CodeInvalid otherwise. Any other error means the store could not decide.
type CodeStore interface {
	Put(ctx context.Context, target, codeHash string) error
	Check(ctx context.Context, target, codeHash string) error
	// Withdraw deletes target's code if it is still codeHash, lifting the resend interval.
	Withdraw(ctx context.Context, target, codeHash string) error
}

// JobEnqueuer puts work on the durable queue.
type JobEnqueuer interface {
	Enqueue(ctx context.Context, j domain.NewJob) (bool, error)
}

// CodeAccounts finds or creates the account a code login is for.
type CodeAccounts interface {
	// FindOrCreateByTarget returns the user with that email or phone, creating it on first login.
	// Concurrent first logins create one account.
	FindOrCreateByTarget(ctx context.Context, t domain.CodeTarget, passwordHash string) (domain.User, error)
}

// EmailClaims hands an account whose email was never verified to the code login that just proved
// its user reads that email (AccountService.ClaimByCodeLogin), before the login's session starts.
// randomHash is the hash of a password nobody knows.
type EmailClaims interface {
	ClaimByCodeLogin(ctx context.Context, channel string, u domain.User, randomHash string) error
}

// Code delivery job, run by job.SendCodeHandler.
const (
	QueueDefault    = "default"
	JobKindSendCode = "send_code"
)

// SendCodePayload is the send_code job's payload. The code is sealed (CodeKeys.Seal), never
// plain, and the job row is deleted when done.
type SendCodePayload struct {
	Channel    string `json:"channel"`
	Address    string `json:"address"`
	SealedCode string `json:"sealedCode"`
}

// CodeLoginService logs users in with one-time codes sent by email or SMS.
type CodeLoginService struct {
	codes    CodeStore
	jobs     JobEnqueuer
	accounts CodeAccounts
	hasher   PasswordHasher
	sessions SessionManager
	claims   EmailClaims
	keys     CodeKeys
	log      *slog.Logger
}

// NewCodeLoginService returns the service.
func NewCodeLoginService(codes CodeStore, jobs JobEnqueuer, accounts CodeAccounts, hasher PasswordHasher, sessions SessionManager,
	claims EmailClaims, keys CodeKeys, log *slog.Logger) *CodeLoginService {
	return &CodeLoginService{codes: codes, jobs: jobs, accounts: accounts, hasher: hasher, sessions: sessions, claims: claims, keys: keys, log: log}
}

// Send makes a code for the email or phone, stores it and queues its delivery.
func (s *CodeLoginService) Send(ctx context.Context, email, phone string) error {
	t, key, err := parseCodeTarget(email, phone)
	if err != nil {
		return err
	}
	code, err := newCode()
	if err != nil {
		return err
	}
	hash := s.keys.Hash(key, code)
	sealed, err := s.keys.Seal(t.Address, code)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(SendCodePayload{Channel: t.Channel, Address: t.Address, SealedCode: sealed})
	if err != nil {
		return err
	}
	// Fail closed: a code that cannot be metered is not sent.
	if err := s.codes.Put(ctx, key, hash); err != nil {
		return storeFailure(err, "store login code")
	}
	if _, err := s.jobs.Enqueue(ctx, domain.NewJob{Queue: QueueDefault, Kind: JobKindSendCode, Payload: payload, MaxAttempts: 5, DeleteWhenDone: true}); err != nil {
		// The code will never be sent: withdraw it, or the user could not ask again for a minute.
		if werr := s.codes.Withdraw(context.WithoutCancel(ctx), key, hash); werr != nil {
			s.log.WarnContext(ctx, "withdrawing an undeliverable login code failed; the next send waits out the resend interval", "err", werr)
		}
		return fmt.Errorf("queue code delivery: %w", err)
	}
	return nil
}

// Login checks the code and returns a session, creating the account on first login.
func (s *CodeLoginService) Login(ctx context.Context, email, phone, code string) (Session, error) {
	t, key, err := parseCodeTarget(email, phone)
	if err != nil {
		return Session{}, err
	}
	if err := domain.ValidateCode(code); err != nil {
		return Session{}, err
	}
	if err := s.codes.Check(ctx, key, s.keys.Hash(key, code)); err != nil {
		return Session{}, storeFailure(err, "verify login code")
	}
	// An account made by code login has a random password nobody knows; the user can set one.
	secret, err := newSecret()
	if err != nil {
		return Session{}, err
	}
	hash, err := s.hasher.Hash(secret)
	if err != nil {
		return Session{}, fmt.Errorf("hash password: %w", err)
	}
	u, err := s.accounts.FindOrCreateByTarget(ctx, t, hash)
	if err != nil {
		return Session{}, err
	}
	// Pre-account takeover: whoever registered this email unverified loses the account now.
	if err := s.claims.ClaimByCodeLogin(ctx, t.Channel, u, hash); err != nil {
		return Session{}, err
	}
	tokens, err := s.sessions.Start(ctx, u.ID)
	if err != nil {
		return Session{}, err
	}
	return Session{User: u, Token: tokens.Access, Refresh: tokens.Refresh}, nil
}

// VerifyOwnCode checks a login code sent to u's own email or phone (POST
// /api/users/login/code/send), spending it: the step-up of a credential change for an account
// without a password it knows (made by code login). Wrong guesses count in the target's failure
// budget like a login's.
func (s *CodeLoginService) VerifyOwnCode(ctx context.Context, u domain.User, code string) error {
	email, phone := u.Email, ""
	if p, ok := domain.PhoneOfPlaceholder(u.Email); ok {
		email, phone = "", p
	}
	_, key, err := parseCodeTarget(email, phone)
	if err != nil {
		return err
	}
	if err := domain.ValidateCode(code); err != nil {
		return err
	}
	if err := s.codes.Check(ctx, key, s.keys.Hash(key, code)); err != nil {
		return storeFailure(err, "verify step-up code")
	}
	return nil
}

// parseCodeTarget parses the target and returns its storage key. A code login may create an
// account, so an email must be acceptable as a new address (ValidateNewEmail): codes are never
// sent to the reserved .invalid domain (phone accounts' placeholders), to a domain IDNA refuses,
// or to a look-alike local part.
func parseCodeTarget(email, phone string) (domain.CodeTarget, string, error) {
	t, err := domain.ParseCodeTarget(email, phone)
	if err != nil {
		return domain.CodeTarget{}, "", err
	}
	if t.Channel == "email" {
		if problems := NewEmailProblems(t.Address); len(problems) > 0 {
			v := &domain.ValidationError{}
			for _, p := range problems {
				v.Add("email", p)
			}
			return domain.CodeTarget{}, "", v
		}
	}
	return t, codeTargetKey(t), nil
}

// storeFailure passes a code refusal on and makes any other code store failure a 503: the store
// could not meter or check, so the step is refused rather than let through.
func storeFailure(err error, what string) error {
	if IsCodeError(err) {
		return err
	}
	return fmt.Errorf("%s: %w: %w", what, domain.ErrUnavailable, err)
}

// IsCodeError reports whether err is a refused code step.
func IsCodeError(err error) bool {
	var ce *domain.CodeError
	return errors.As(err, &ce)
}

func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", b), nil
}
