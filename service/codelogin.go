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

// CodeStore keeps one-time codes: Put refuses a resend within the resend interval
// (*domain.CodeError CodeTooSoon); Check returns nil for the right code and a *domain.CodeError
// otherwise.
type CodeStore interface {
	Put(ctx context.Context, target, code string) error
	Check(ctx context.Context, target, code string) error
	// Withdraw deletes target's code if it is still code, lifting the resend interval.
	Withdraw(ctx context.Context, target, code string) error
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

// SendCodePayload is the send_code job's payload.
type SendCodePayload struct {
	Channel string `json:"channel"`
	Address string `json:"address"`
	Code    string `json:"code"`
}

// CodeLoginService logs users in with one-time codes sent by email or SMS.
type CodeLoginService struct {
	codes    CodeStore
	jobs     JobEnqueuer
	accounts CodeAccounts
	hasher   PasswordHasher
	sessions SessionManager
	claims   EmailClaims
	log      *slog.Logger
}

// NewCodeLoginService returns the service.
func NewCodeLoginService(codes CodeStore, jobs JobEnqueuer, accounts CodeAccounts, hasher PasswordHasher, sessions SessionManager,
	claims EmailClaims, log *slog.Logger) *CodeLoginService {
	return &CodeLoginService{codes: codes, jobs: jobs, accounts: accounts, hasher: hasher, sessions: sessions, claims: claims, log: log}
}

// Send makes a code for the email or phone, stores it and queues its delivery.
func (s *CodeLoginService) Send(ctx context.Context, email, phone string) error {
	t, err := domain.ParseCodeTarget(email, phone)
	if err != nil {
		return err
	}
	code, err := newCode()
	if err != nil {
		return err
	}
	if err := s.codes.Put(ctx, t.Key(), code); err != nil {
		return err
	}
	payload, err := json.Marshal(SendCodePayload{Channel: t.Channel, Address: t.Address, Code: code})
	if err != nil {
		return err
	}
	if _, err := s.jobs.Enqueue(ctx, domain.NewJob{Queue: QueueDefault, Kind: JobKindSendCode, Payload: payload, MaxAttempts: 5}); err != nil {
		// The code will never be sent: withdraw it, or the user could not ask again for a minute.
		if werr := s.codes.Withdraw(context.WithoutCancel(ctx), t.Key(), code); werr != nil {
			s.log.WarnContext(ctx, "withdrawing an undeliverable login code failed; the next send waits out the resend interval", "err", werr)
		}
		return fmt.Errorf("queue code delivery: %w", err)
	}
	return nil
}

// Login checks the code and returns a session, creating the account on first login.
func (s *CodeLoginService) Login(ctx context.Context, email, phone, code string) (Session, error) {
	t, err := domain.ParseCodeTarget(email, phone)
	if err != nil {
		return Session{}, err
	}
	if err := domain.ValidateCode(code); err != nil {
		return Session{}, err
	}
	if err := s.codes.Check(ctx, t.Key(), code); err != nil {
		return Session{}, err
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
