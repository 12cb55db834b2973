package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=user.go -destination=mocks/user_mock.go -package=mocks

// UserRepository stores accounts. Implementations return domain.ErrNotFound for a missing user,
// domain.ErrEmailTaken / domain.ErrUsernameTaken when a uniqueness rule is violated. Shared: the
// profile, article, comment and rank use cases look users up through it too.
type UserRepository interface {
	// CreateIn is Create in the caller's unit of work; a uniqueness rejection leaves tx usable.
	CreateIn(ctx context.Context, tx Tx, u domain.User) (domain.User, error)
	GetByID(ctx context.Context, id int64) (domain.User, error)
	GetByEmail(ctx context.Context, email string) (domain.User, error)
	GetByUsername(ctx context.Context, username string) (domain.User, error)
	// Update loads the user, applies change to it inside one transaction and stores the result.
	// An error from change aborts the transaction and is returned unchanged.
	Update(ctx context.Context, id int64, change func(*domain.User) error) (domain.User, error)
	// UpdateIn is Update in the caller's unit of work, for writes that must commit with the
	// user's (ending sessions on a credential change).
	UpdateIn(ctx context.Context, tx Tx, id int64, change func(*domain.User) error) (domain.User, error)
	// GetByIDs returns the users among ids that exist, keyed by id, in one query.
	GetByIDs(ctx context.Context, ids []int64) (map[int64]domain.User, error)
	// ReplacePasswordHash swaps the stored hash only if it still equals oldHash, so a rehash on
	// login can never overwrite a password changed concurrently.
	ReplacePasswordHash(ctx context.Context, id int64, oldHash, newHash string) error
	// HoldIfPasswordIn holds user id's row in tx (until it ends) if its password hash is still
	// hash; held is false when the password changed meanwhile.
	HoldIfPasswordIn(ctx context.Context, tx Tx, id int64, hash string) (held bool, err error)
}

// PasswordHasher hashes and verifies passwords. Verify reports needsRehash when the stored hash
// was made with weaker parameters than the hasher's current ones. Shared with code login
// (codelogin.go).
type PasswordHasher interface {
	Hash(password string) (string, error)
	Verify(password, encoded string) (match, needsRehash bool, err error)
}

// SessionManager starts sessions and authenticates credentials (SessionService). Shared with code
// login (codelogin.go).
type SessionManager interface {
	Start(ctx context.Context, userID int64) (domain.Tokens, error)
	// StartIn is Start in the caller's unit of work.
	StartIn(ctx context.Context, tx Tx, userID int64) (domain.Tokens, error)
	Authenticate(ctx context.Context, token string) (domain.Credential, error)
	// RevokeAllIn ends every session of userID but keep, and with keys every API key, in tx;
	// each ended session is refused on every instance once tx has committed.
	RevokeAllIn(ctx context.Context, tx Tx, userID int64, keep string, keys bool) error
}

// RegistrationVerifier issues a new account its email verification code, and queues the mail,
// in the account's unit of work (AccountService.IssueVerificationIn): an account is never
// committed without its mail, whatever crashes after the commit.
type RegistrationVerifier interface {
	IssueVerificationIn(ctx context.Context, tx Tx, u domain.User) error
}

// StepUpCodes checks a login code sent to the account's own email or phone, spending it
// (CodeLoginService.VerifyOwnCode): the step-up of accounts that have no password they know.
type StepUpCodes interface {
	VerifyOwnCode(ctx context.Context, u domain.User, code string) error
}

// UserService registers accounts, logs users in and manages the current user's settings.
type UserService struct {
	users    UserRepository
	uow      UnitOfWork
	hasher   PasswordHasher
	sessions SessionManager
	idem     Idempotency
	verifier RegistrationVerifier
	codes    StepUpCodes
	log      *slog.Logger
	now      func() time.Time
	uploads  AvatarUploads

	dummyOnce sync.Once
	dummyHash string
}

// NewUserService returns a UserService over its ports.
func NewUserService(users UserRepository, uow UnitOfWork, hasher PasswordHasher, sessions SessionManager, idem Idempotency, verifier RegistrationVerifier,
	codes StepUpCodes, log *slog.Logger, now func() time.Time, uploads AvatarUploads) *UserService {
	return &UserService{users: users, uow: uow, hasher: hasher, sessions: sessions, idem: idem, verifier: verifier, codes: codes, log: log, now: now, uploads: uploads}
}

// RegisterInput is what a new account needs.
type RegisterInput struct {
	Username string
	Email    string
	Password string
}

// UpdateUserInput carries the fields to change; nil means "leave as is".
type UpdateUserInput struct {
	Email    *string
	Username *string
	Password *string
	Bio      *string
	Image    *string
	// CurrentPassword proves the user is at the keyboard: required to change Email or Password.
	CurrentPassword string
	// Code may stand in for CurrentPassword: a login code sent to the account's own email or
	// phone (for accounts made by code login, whose password nobody knows).
	Code string
}

// Session is a user together with a freshly issued access token and refresh token.
type Session struct {
	User    domain.User
	Token   string
	Refresh string
}

// Register validates the input, creates the account and returns it with an access token.
func (s *UserService) Register(ctx context.Context, in RegisterInput) (Session, error) {
	u, err := s.newAccount(in)
	if err != nil {
		return Session{}, err
	}
	// The account commits with its verification mail, or not at all.
	var created domain.User
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if created, err = s.users.CreateIn(ctx, tx, u); err != nil {
			return err
		}
		return s.verifier.IssueVerificationIn(ctx, tx, created)
	})
	if err != nil {
		return Session{}, uniquenessAsValidation(err)
	}
	return s.session(ctx, created)
}

// RegisterIdempotent is Register under an Idempotency-Key: the account, its session and the
// stored answer commit together, and a retry is answered from the store. The password is hashed
// before the unit of work opens, so no connection waits on it.
//
// No token is stored: the stored answer is rendered from the account alone and names it
// (SessionFor). The answer sent the first time carries the session started with the account; a
// replay is a login with the registration's password, which must still be the account's, and
// carries a session of its own (an earlier answer's tokens may have been rotated or revoked since,
// and are never handed out again). A replay whose password no longer matches is answered
// domain.ErrInvalidCredentials.
func (s *UserService) RegisterIdempotent(ctx context.Context, in RegisterInput, idem Idempotent[Session]) (domain.StoredResponse, bool, error) {
	var started Session
	withoutTokens := Idempotent[Session]{Key: idem.Key, Render: func(v Session, err error) domain.StoredResponse {
		res := idem.Render(Session{User: v.User}, err)
		if err == nil {
			res.SessionFor = v.User.ID
		}
		return res
	}}
	res, replayed, err := runIdempotent(ctx, s.idem, withoutTokens,
		func() (domain.User, error) { return s.newAccount(in) },
		func(ctx context.Context, tx Tx, u domain.User) (Session, error) {
			created, err := s.users.CreateIn(ctx, tx, u)
			if err != nil {
				return Session{}, uniquenessAsValidation(err)
			}
			if err := s.verifier.IssueVerificationIn(ctx, tx, created); err != nil {
				return Session{}, fmt.Errorf("issue the verification code of user %d: %w", created.ID, err)
			}
			t, err := s.sessions.StartIn(ctx, tx, created.ID)
			if err != nil {
				return Session{}, fmt.Errorf("start session for user %d: %w", created.ID, err)
			}
			started = Session{User: created, Token: t.Access, Refresh: t.Refresh}
			return started, nil
		})
	switch {
	case err != nil || res.SessionFor == 0:
		return res, replayed, err // a rejection, replayed as stored, or no answer at all
	case !replayed:
		return idem.Render(started, nil), false, nil
	}
	sess, err := s.replaySession(ctx, res.SessionFor, in.Password)
	if err != nil && !errors.Is(err, domain.ErrInvalidCredentials) {
		return domain.StoredResponse{}, true, err
	}
	return idem.Render(sess, err), true, nil
}

// replaySession signs in the account a keyed registration created, with the password that
// registration sent, as POST /api/users/login would.
func (s *UserService) replaySession(ctx context.Context, userID int64, password string) (Session, error) {
	u, err := s.users.GetByID(ctx, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return Session{}, domain.ErrInvalidCredentials
	}
	if err != nil {
		return Session{}, err
	}
	return s.Login(ctx, u.Email, password)
}

// newAccount validates a registration and hashes its password: the work that needs no database.
func (s *UserService) newAccount(in RegisterInput) (domain.User, error) {
	in.Email = domain.NormalizeEmail(in.Email)
	v := &domain.ValidationError{}
	domain.ValidateUsername(v, in.Username)
	ValidateNewEmail(v, in.Email)
	domain.ValidatePassword(v, in.Password)
	if err := v.OrNil(); err != nil {
		return domain.User{}, err
	}
	hash, err := s.hasher.Hash(in.Password)
	if err != nil {
		return domain.User{}, fmt.Errorf("hash password: %w", err)
	}
	return domain.User{Email: in.Email, Username: in.Username, PasswordHash: hash}, nil
}

// Login checks an email and password. Unknown emails and wrong passwords both give
// domain.ErrInvalidCredentials, and both cost one hash verification so timing tells nothing.
func (s *UserService) Login(ctx context.Context, email, password string) (Session, error) {
	email = domain.NormalizeEmail(email)
	v := &domain.ValidationError{}
	if email == "" {
		v.Add("email", "can't be blank")
	}
	if password == "" {
		v.Add("password", "can't be blank")
	}
	if len(password) > domain.MaxPasswordLen {
		return Session{}, domain.ErrInvalidCredentials
	}
	if err := v.OrNil(); err != nil {
		return Session{}, err
	}

	u, err := s.users.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		s.burnVerification(password)
		return Session{}, domain.ErrInvalidCredentials
	}
	if err != nil {
		return Session{}, err
	}
	match, needsRehash, err := s.hasher.Verify(password, u.PasswordHash)
	if err != nil {
		return Session{}, fmt.Errorf("verify password of user %d: %w", u.ID, err)
	}
	if !match {
		return Session{}, domain.ErrInvalidCredentials
	}
	if err := refuseSuspended(u, s.now()); err != nil {
		return Session{}, err
	}
	verified := u.PasswordHash
	if needsRehash {
		verified = s.rehash(ctx, u, password)
	}
	// The session starts only while the password is still the one just verified: a reset,
	// takeover or password change that commits while Argon2 ran ends every session, and must
	// not be outrun by this one.
	var t domain.Tokens
	held := false
	err = s.uow.InTx(ctx, func(tx Tx) error {
		var err error
		if held, err = s.users.HoldIfPasswordIn(ctx, tx, u.ID, verified); err != nil || !held {
			return err
		}
		t, err = s.sessions.StartIn(ctx, tx, u.ID)
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("start session for user %d: %w", u.ID, err)
	}
	if !held {
		return Session{}, domain.ErrInvalidCredentials
	}
	return Session{User: u, Token: t.Access, Refresh: t.Refresh}, nil
}

// Authenticate turns an access token or API key into the credential of an existing user.
func (s *UserService) Authenticate(ctx context.Context, token string) (domain.Credential, error) {
	cred, err := s.sessions.Authenticate(ctx, token)
	if err != nil {
		if errors.Is(err, domain.ErrUnauthorized) {
			return domain.Credential{}, domain.ErrUnauthorized
		}
		return domain.Credential{}, err
	}
	// A token may outlive its account; such a token authenticates nobody. The account is read
	// through its coherent cache, so a suspension refuses every session and key of the user on
	// the next request on any instance.
	u, err := s.users.GetByID(ctx, cred.UserID)
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return domain.Credential{}, domain.ErrUnauthorized
		}
		return domain.Credential{}, err
	}
	if err := refuseSuspended(u, s.now()); err != nil {
		return domain.Credential{}, err
	}
	return cred, nil
}

// Current returns the user with the given id; a suspended account is refused (a refresh reads
// the user this way after rotating its token).
func (s *UserService) Current(ctx context.Context, userID int64) (domain.User, error) {
	u, err := s.users.GetByID(ctx, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.User{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.User{}, err
	}
	return u, refuseSuspended(u, s.now())
}

// refuseSuspended is the one rule every way in checks (a token, an API key, a refresh, a
// password or code login): a suspension in force refuses it, saying why and until when.
func refuseSuspended(u domain.User, now time.Time) error {
	if u.Suspension.InForce(now) {
		return &domain.SuspendedError{Suspension: u.Suspension}
	}
	return nil
}

// Update changes the current user's settings. Only the fields present in the input change.
// Changing the email or password needs the current password (see stepUp), and ends every other
// session and every API key of the user, in the same unit of work; the caller's session stays.
// An API key is refused here too, not only by the HTTP layer (SessionOnly): a key must never
// manage the account.
func (s *UserService) Update(ctx context.Context, cred domain.Credential, in UpdateUserInput) (domain.User, error) {
	if cred.IsAPIKey() {
		return domain.User{}, domain.ErrForbidden
	}
	userID := cred.UserID
	v := &domain.ValidationError{}
	if in.Email != nil {
		e := domain.NormalizeEmail(*in.Email)
		in.Email = &e
		domain.ValidateEmail(v, e) // a reserved or look-alike address is refused below, if the email changes
	}
	if in.Username != nil {
		domain.ValidateUsernameFormat(v, *in.Username)
	}
	if in.Password != nil {
		domain.ValidatePassword(v, *in.Password)
	}
	if in.Bio != nil {
		domain.ValidateBio(v, *in.Bio)
	}
	if in.Image != nil {
		domain.ValidateImage(v, *in.Image)
	}
	if err := v.OrNil(); err != nil {
		return domain.User{}, err
	}
	if in.Email != nil && len(NewEmailProblems(*in.Email)) > 0 {
		// Refused before the step-up asks for a password: moving to a reserved or look-alike
		// address is bad input whoever asks (keeping the one the account has is not a change;
		// checked again below, in the transaction).
		cur, err := s.users.GetByID(ctx, userID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return domain.User{}, err
		}
		if err := refuseNewEmail(cur.Email, *in.Email); err != nil {
			return domain.User{}, err
		}
	}
	verified, err := s.stepUp(ctx, userID, &in)
	if err != nil {
		return domain.User{}, err
	}
	// An avatar that is an upload must be the user's own; what it refers to is recorded with the
	// change (retention keeps referenced uploads).
	var avatar []int64
	if in.Image != nil {
		if avatar, err = imageUploads(ctx, s.uploads, userID, "image", *in.Image); err != nil {
			return domain.User{}, err
		}
	}
	recordAvatar := func(tx Tx) error {
		if in.Image == nil {
			return nil
		}
		return s.uploads.ReplaceAvatarIn(ctx, tx, userID, avatar)
	}

	// Hash before the transaction: it takes tens of milliseconds and must not hold the row lock.
	var newHash string
	if in.Password != nil {
		h, err := s.hasher.Hash(*in.Password)
		if err != nil {
			return domain.User{}, fmt.Errorf("hash password: %w", err)
		}
		newHash = h
	}
	apply := func(u *domain.User) error {
		// A settings form sends every field back: an account may keep a name or address that is
		// reserved now (a phone account's placeholder email), but not change to one.
		if in.Email != nil {
			if err := refuseNewEmail(u.Email, *in.Email); err != nil {
				return err
			}
		}
		if in.Username != nil && !strings.EqualFold(*in.Username, u.Username) && domain.UsernameReserved(*in.Username) {
			return domain.NewValidationError("username", "is reserved")
		}
		if in.Email != nil {
			u.Email = *in.Email
		}
		if in.Username != nil {
			u.Username = *in.Username
		}
		if newHash != "" {
			u.PasswordHash = newHash
		}
		if in.Bio != nil {
			u.Bio = *in.Bio
		}
		if in.Image != nil {
			u.Image = *in.Image
		}
		return nil
	}
	var u domain.User
	switch {
	case verified == "" && in.Image == nil:
		u, err = s.users.Update(ctx, userID, apply)
	case verified == "":
		err = s.uow.InTx(ctx, func(tx Tx) error {
			var err error
			if u, err = s.users.UpdateIn(ctx, tx, userID, apply); err != nil {
				return err
			}
			return recordAvatar(tx)
		})
	default:
		err = s.uow.InTx(ctx, func(tx Tx) error {
			var err error
			u, err = s.users.UpdateIn(ctx, tx, userID, func(u *domain.User) error {
				// The password checked may have been changed since (another session): refuse,
				// or the change would rest on a password that is no longer the account's.
				if u.PasswordHash != verified {
					return domain.ErrWrongCurrentPassword
				}
				return apply(u)
			})
			if err != nil {
				return err
			}
			if err := recordAvatar(tx); err != nil {
				return err
			}
			return s.sessions.RevokeAllIn(ctx, tx, userID, cred.SessionID, true)
		})
	}
	if errors.Is(err, domain.ErrNotFound) {
		return domain.User{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.User{}, uniquenessAsValidation(err)
	}
	return u, nil
}

// stepUp checks the current password when in changes a credential (the email, or the password),
// before any transaction: it costs one Argon2 verification, like a login. It returns the hash it
// verified against ("" when no credential changes). An email equal to the stored one is no change,
// since RealWorld front ends send the whole user back.
func (s *UserService) stepUp(ctx context.Context, userID int64, in *UpdateUserInput) (string, error) {
	if in.Email == nil && in.Password == nil {
		return "", nil
	}
	u, err := s.users.GetByID(ctx, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return "", domain.ErrUnauthorized
	}
	if err != nil {
		return "", err
	}
	if in.Email != nil && CanonicalEmail(*in.Email) == CanonicalEmail(u.Email) {
		in.Email = nil // the same address (perhaps typed differently): not a credential change
	}
	if in.Email == nil && in.Password == nil {
		return "", nil
	}
	if in.CurrentPassword == "" && in.Code != "" && s.codes != nil {
		return s.stepUpByCode(ctx, userID, u, in.Code)
	}
	if in.CurrentPassword == "" {
		return "", domain.NewValidationError("currentPassword", "is required to change email or password")
	}
	if len(in.CurrentPassword) > domain.MaxPasswordLen {
		return "", domain.ErrWrongCurrentPassword
	}
	// The cached user carries no password hash; the by-email read goes to PostgreSQL, as login's.
	stored, err := s.users.GetByEmail(ctx, u.Email)
	if err != nil || stored.ID != userID {
		if err == nil || errors.Is(err, domain.ErrNotFound) {
			return "", domain.ErrConflict // the email changed meanwhile: reload and retry
		}
		return "", err
	}
	match, _, err := s.hasher.Verify(in.CurrentPassword, stored.PasswordHash)
	if err != nil {
		return "", fmt.Errorf("verify password of user %d: %w", userID, err)
	}
	if !match {
		return "", domain.ErrWrongCurrentPassword
	}
	return stored.PasswordHash, nil
}

// stepUpByCode is the step-up with a login code sent to the account's own email or phone. It
// returns the password hash stored before the code was checked, so a password changed meanwhile
// (another session) still makes the update refuse.
func (s *UserService) stepUpByCode(ctx context.Context, userID int64, u domain.User, code string) (string, error) {
	stored, err := s.users.GetByEmail(ctx, u.Email) // the cached user carries no hash
	if err != nil || stored.ID != userID {
		if err == nil || errors.Is(err, domain.ErrNotFound) {
			return "", domain.ErrConflict // the email changed meanwhile: reload and retry
		}
		return "", err
	}
	if err := s.codes.VerifyOwnCode(ctx, stored, code); err != nil {
		var ce *domain.CodeError
		if errors.As(err, &ce) && ce.Reason == domain.CodeInvalid {
			return "", domain.ErrWrongStepUpCode
		}
		return "", err // a locked target (429), a malformed code (422), a store failure (503)
	}
	return stored.PasswordHash, nil
}

func (s *UserService) session(ctx context.Context, u domain.User) (Session, error) {
	t, err := s.sessions.Start(ctx, u.ID)
	if err != nil {
		return Session{}, fmt.Errorf("start session for user %d: %w", u.ID, err)
	}
	return Session{User: u, Token: t.Access, Refresh: t.Refresh}, nil
}

// rehash upgrades a stored hash to the current parameters and returns the hash stored now.
// Failure only costs the upgrade, so it is logged and the login goes on with the old hash.
func (s *UserService) rehash(ctx context.Context, u domain.User, password string) string {
	h, err := s.hasher.Hash(password)
	if err == nil {
		err = s.users.ReplacePasswordHash(ctx, u.ID, u.PasswordHash, h)
	}
	if err != nil {
		s.log.WarnContext(ctx, "password rehash failed", "user_id", u.ID, "err", err)
		return u.PasswordHash
	}
	return h
}

// burnVerification spends the same work as checking a real password, so a login for an unknown
// email takes as long as one with a wrong password.
func (s *UserService) burnVerification(password string) {
	s.dummyOnce.Do(func() { s.dummyHash, _ = s.hasher.Hash("inkwell-timing-equalizer") })
	_, _, _ = s.hasher.Verify(password, s.dummyHash)
}

// refuseNewEmail is the validation error of an account moving from current to email, when email
// is another address that may not become an account's (NewEmailProblems); nil otherwise.
func refuseNewEmail(current, email string) error {
	if CanonicalEmail(current) == CanonicalEmail(email) {
		return nil
	}
	v := &domain.ValidationError{}
	for _, p := range NewEmailProblems(email) {
		v.Add("email", p)
	}
	return v.OrNil()
}

func uniquenessAsValidation(err error) error {
	v := &domain.ValidationError{}
	if errors.Is(err, domain.ErrEmailTaken) {
		v.Add("email", "has already been taken")
	}
	if errors.Is(err, domain.ErrUsernameTaken) {
		v.Add("username", "has already been taken")
	}
	if len(v.Fields) > 0 {
		return v
	}
	return err
}
