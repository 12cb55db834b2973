package service

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=codelogin.go -destination=mocks/codelogin_mock.go -package=mocks

// CodeStore keeps one-time codes as hashes (see CodeKeys.Hash) and meters them: Put refuses a
// send over the global rate, within the resend interval, past client's daily cap for the target,
// or, for a code that is not strong, while the target's failure budget is used up (a
// *domain.CodeError with RetryAfter); Check returns nil for the right code, a *domain.CodeError
// CodeLocked while the target's failure budget is used up and its live code is not strong, and
// CodeInvalid otherwise. Any other error means the store could not decide.
type CodeStore interface {
	Put(ctx context.Context, target, client, codeHash string, strong bool) error
	Check(ctx context.Context, target, codeHash string) error
	// Withdraw deletes target's code if it is still codeHash, lifting the resend interval and
	// giving client's send back.
	Withdraw(ctx context.Context, target, client, codeHash string) error
}

// JobEnqueuer puts work on the durable queue.
type JobEnqueuer interface {
	Enqueue(ctx context.Context, j domain.NewJob) (bool, error)
}

// CodeAccounts finds or creates the account a code is for.
type CodeAccounts interface {
	// FindOrCreateByTarget returns the user with that email or phone, creating it on first login.
	// Concurrent first logins create one account.
	FindOrCreateByTarget(ctx context.Context, t domain.CodeTarget, passwordHash string) (domain.User, error)
	// GetByEmail returns the account whose email is that mailbox: its codes go to its address as
	// stored, never to the spelling someone typed.
	GetByEmail(ctx context.Context, email string) (domain.User, error)
	GetByID(ctx context.Context, id int64) (domain.User, error)
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

// What a one-time code is for. Each purpose keeps its codes, resend interval and budgets under
// keys of its own (the target's key with the purpose's prefix), so asking for one never refuses
// or spends the other.
const (
	CodePurposeLogin  = ""        // a sign-in code (POST /api/users/login/code/send)
	CodePurposeStepUp = "step_up" // confirms a change of email or password (POST /api/user/step-up/code)
)

// SendCodePayload is the send_code job's payload. The code is sealed (CodeKeys.Seal), never
// plain, and the job row is deleted when done.
type SendCodePayload struct {
	Channel    string `json:"channel"`
	Address    string `json:"address"`
	Purpose    string `json:"purpose,omitempty"` // CodePurposeLogin or CodePurposeStepUp
	SealedCode string `json:"sealedCode"`
}

// CodeLoginService logs users in with one-time codes sent by email or SMS, and sends and checks
// the step-up codes of credential changes.
type CodeLoginService struct {
	codes    CodeStore
	jobs     JobEnqueuer
	accounts CodeAccounts
	hasher   PasswordHasher
	sessions SessionManager
	claims   EmailClaims
	keys     CodeKeys
	log      *slog.Logger
	now      func() time.Time
}

// NewCodeLoginService returns the service.
func NewCodeLoginService(codes CodeStore, jobs JobEnqueuer, accounts CodeAccounts, hasher PasswordHasher, sessions SessionManager,
	claims EmailClaims, keys CodeKeys, log *slog.Logger, now func() time.Time) *CodeLoginService {
	return &CodeLoginService{codes: codes, jobs: jobs, accounts: accounts, hasher: hasher, sessions: sessions, claims: claims, keys: keys, log: log, now: now}
}

// Send makes a sign-in code for the email or phone, stores it and queues its delivery: to the
// address of the account that mailbox or phone has, as stored, or, with no account yet, as typed
// (the first login creates the account with that mailbox).
func (s *CodeLoginService) Send(ctx context.Context, email, phone string) error {
	t, key, err := parseCodeTarget(email, phone)
	if err != nil {
		return err
	}
	if t.Channel == "email" {
		u, err := s.accounts.GetByEmail(ctx, t.Address)
		switch {
		case err == nil:
			t.Address = u.Email
		case !errors.Is(err, domain.ErrNotFound):
			return err
		}
	}
	return s.send(ctx, t, key, CodePurposeLogin)
}

// SendStepUpCode sends a step-up code to the account's own email or phone, as stored: the proof a
// credential change asks of an account without a password it knows (made by code login). It has
// its own key, resend interval and budgets, apart from sign-in codes.
func (s *CodeLoginService) SendStepUpCode(ctx context.Context, userID int64) error {
	u, err := s.accounts.GetByID(ctx, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ErrUnauthorized
	}
	if err != nil {
		return err
	}
	t, key := ownTarget(u)
	return s.send(ctx, t, key, CodePurposeStepUp)
}

// send stores a new code for key and queues its delivery to t. While key's failure budget is used
// up, the code is a strong one (domain.NewAccountCode: 50 bits), which the lock does not apply to:
// an attacker's wrong guesses can slow the owner down, never lock them out.
func (s *CodeLoginService) send(ctx context.Context, t domain.CodeTarget, key, purpose string) error {
	client := requesterOf(ctx)
	code, err := newCode()
	if err != nil {
		return err
	}
	hash := s.keys.Hash(key, code)
	err = s.codes.Put(ctx, key, client, hash, false)
	var ce *domain.CodeError
	if errors.As(err, &ce) && ce.Reason == domain.CodeLocked {
		code = domain.NewAccountCode()
		canonical, _ := domain.CanonicalAccountCode(code)
		hash = s.keys.Hash(key, canonical)
		err = s.codes.Put(ctx, key, client, hash, true)
	}
	// Fail closed: a code that cannot be metered is not sent.
	if err != nil {
		return storeFailure(err, "store login code")
	}
	sealed, err := s.keys.Seal(t.Address, code)
	if err == nil {
		var payload []byte
		payload, err = json.Marshal(SendCodePayload{Channel: t.Channel, Address: t.Address, Purpose: purpose, SealedCode: sealed})
		if err == nil {
			_, err = s.jobs.Enqueue(ctx, domain.NewJob{Queue: QueueDefault, Kind: JobKindSendCode, Payload: payload, MaxAttempts: 5, DeleteWhenDone: true})
		}
	}
	if err != nil {
		// The code will never be sent: withdraw it, or the user could not ask again for a minute.
		if werr := s.codes.Withdraw(context.WithoutCancel(ctx), key, client, hash); werr != nil {
			s.log.WarnContext(ctx, "withdrawing an undeliverable code failed; the next send waits out the resend interval", "err", werr)
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
	if err := s.check(ctx, key, code, "verify login code"); err != nil {
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
	if err := refuseSuspended(u, s.now()); err != nil {
		return Session{}, err
	}
	tokens, err := s.sessions.Start(ctx, u.ID)
	if err != nil {
		return Session{}, err
	}
	return Session{User: u, Token: tokens.Access, Refresh: tokens.Refresh}, nil
}

// VerifyOwnCode checks a step-up code sent to u's own email or phone (SendStepUpCode), spending
// it: the step-up of a credential change for an account without a password it knows (made by code
// login). Wrong guesses count in the step-up budget of that address. A sign-in code is not a
// step-up code.
func (s *CodeLoginService) VerifyOwnCode(ctx context.Context, u domain.User, code string) error {
	_, key := ownTarget(u)
	return s.check(ctx, key, code, "verify step-up code")
}

func (s *CodeLoginService) check(ctx context.Context, key, code, what string) error {
	canonical, err := domain.CanonicalOneTimeCode(code)
	if err != nil {
		return err
	}
	if err := s.codes.Check(ctx, key, s.keys.Hash(key, canonical)); err != nil {
		return storeFailure(err, what)
	}
	return nil
}

// ownTarget is where u's step-up codes go (its email as stored, or the phone of a phone
// account's placeholder) and the key they are kept under.
func ownTarget(u domain.User) (domain.CodeTarget, string) {
	t := domain.CodeTarget{Channel: "email", Address: u.Email}
	if p, ok := domain.PhoneOfPlaceholder(u.Email); ok {
		t = domain.CodeTarget{Channel: "phone", Address: p}
	}
	return t, stepUpKeyPrefix + codeTargetKey(t)
}

// stepUpKeyPrefix keeps step-up codes apart from sign-in codes (the seed's per-purpose keys).
const stepUpKeyPrefix = "stepup:"

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
