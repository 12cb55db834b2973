package service_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type userDeps struct {
	repo   *mocks.MockUserRepository
	hasher *mocks.MockPasswordHasher
	tokens *mocks.MockSessionManager
	idem   *mocks.MockIdempotency
	codes  *mocks.MockStepUpCodes
}

func newUserService(t *testing.T) (*service.UserService, userDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := userDeps{
		repo:   mocks.NewMockUserRepository(ctrl),
		hasher: mocks.NewMockPasswordHasher(ctrl),
		tokens: mocks.NewMockSessionManager(ctrl),
		idem:   mocks.NewMockIdempotency(ctrl),
		codes:  mocks.NewMockStepUpCodes(ctrl),
	}
	return service.NewUserService(d.repo, txUnitOfWork{noHooksTx{}}, d.hasher, d.tokens, d.idem, noVerification{}, d.codes, discardLogger, time.Now, noUploads{}), d
}

// untouched proves that rejected input reaches neither storage, the hasher nor the token issuer.
func untouched(d userDeps) {
	d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.repo.EXPECT().GetByEmail(gomock.Any(), gomock.Any()).Times(0)
	d.repo.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.tokens.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	d.hasher.EXPECT().Hash(gomock.Any()).Times(0)
	d.hasher.EXPECT().Verify(gomock.Any(), gomock.Any()).Times(0)
	d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
}

var jake = domain.User{
	ID:           7,
	Email:        "jake@jake.jake",
	Username:     "jake",
	PasswordHash: "$argon2id$stored",
	Bio:          "I work at statefarm",
	Image:        "https://example.com/jake.png",
	CreatedAt:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	UpdatedAt:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
}

func TestUserService_Register(t *testing.T) {
	t.Parallel()
	valid := service.RegisterInput{Username: "jake", Email: "jake@jake.jake", Password: "jakejake"}
	created := domain.User{ID: 7, Email: "jake@jake.jake", Username: "jake", PasswordHash: "HASH"}

	tests := []struct {
		name       string
		in         service.RegisterInput
		buildStubs func(d userDeps)
		check      func(t *testing.T, s service.Session, err error)
	}{
		{
			name: "creates the account with the hash and a normalized email, and issues a token",
			in:   service.RegisterInput{Username: "jake", Email: "  Jake@JAKE.jake ", Password: "jakejake"},
			buildStubs: func(d userDeps) {
				gomock.InOrder(
					d.hasher.EXPECT().Hash("jakejake").Return("HASH", nil),
					d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), domain.User{Email: "Jake@JAKE.jake", Username: "jake", PasswordHash: "HASH"}).
						Return(created, nil),
					d.tokens.EXPECT().Start(gomock.Any(), int64(7)).Return(domain.Tokens{Access: "TOKEN", Refresh: "REFRESH"}, nil),
				)
			},
			check: func(t *testing.T, s service.Session, err error) {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				if want := (service.Session{User: created, Token: "TOKEN", Refresh: "REFRESH"}); !reflect.DeepEqual(s, want) {
					t.Errorf("session = %+v, want %+v", s, want)
				}
			},
		},
		{
			name:       "every invalid field is reported at once",
			in:         service.RegisterInput{Username: "jake smith", Email: "not-an-email", Password: "short"},
			buildStubs: untouched,
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{
					"username": {"may contain only letters, digits, '.', '_' and '-'"},
					"email":    {"is invalid"},
					"password": {"is too short (minimum is 8 characters)"},
				})
			},
		},
		{
			name:       "blank fields",
			in:         service.RegisterInput{Username: "", Email: "   ", Password: ""},
			buildStubs: untouched,
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{
					"username": {"can't be blank"},
					"email":    {"can't be blank"},
					"password": {"can't be blank"},
				})
			},
		},
		{
			name:       "oversized fields",
			in:         service.RegisterInput{Username: strings.Repeat("j", 41), Email: "jake@jake.jake", Password: strings.Repeat("p", 257)},
			buildStubs: untouched,
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{
					"username": {"is too long (maximum is 40 characters)"},
					"password": {"is too long (maximum is 256 bytes)"},
				})
			},
		},
		{
			name: "email taken becomes a validation error on email",
			in:   valid,
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash("jakejake").Return("HASH", nil)
				d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).
					Return(domain.User{}, fmt.Errorf("insert user: %w", domain.ErrEmailTaken))
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{"email": {"has already been taken"}})
			},
		},
		{
			name: "username taken becomes a validation error on username",
			in:   valid,
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash("jakejake").Return("HASH", nil)
				d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).
					Return(domain.User{}, fmt.Errorf("insert user: %w", domain.ErrUsernameTaken))
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{"username": {"has already been taken"}})
			},
		},
		{
			name: "both taken are both reported",
			in:   valid,
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash("jakejake").Return("HASH", nil)
				d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).
					Return(domain.User{}, errors.Join(domain.ErrEmailTaken, domain.ErrUsernameTaken))
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{
					"email":    {"has already been taken"},
					"username": {"has already been taken"},
				})
			},
		},
		{
			name: "storage failure passes through",
			in:   valid,
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash("jakejake").Return("HASH", nil)
				d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).
					Return(domain.User{}, fmt.Errorf("insert user: %w", domain.ErrUnavailable))
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireErrorIs(t, err, domain.ErrUnavailable)
			},
		},
		{
			name: "hashing failure stops before storage",
			in:   valid,
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash("jakejake").Return("", errors.New("entropy exhausted"))
				d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireNoValidation(t, err)
			},
		},
		{
			name: "token failure fails the registration",
			in:   valid,
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash("jakejake").Return("HASH", nil)
				d.repo.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).Return(created, nil)
				d.tokens.EXPECT().Start(gomock.Any(), int64(7)).Return(domain.Tokens{}, errors.New("signing failed"))
			},
			check: func(t *testing.T, s service.Session, err error) {
				requireNoValidation(t, err)
				if s.Token != "" {
					t.Errorf("token = %q, want none", s.Token)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newUserService(t)
			tc.buildStubs(d)
			s, err := svc.Register(context.Background(), tc.in)
			tc.check(t, s, err)
		})
	}
}

func TestUserService_Login(t *testing.T) {
	t.Parallel()
	const password = "jakejake"

	tests := []struct {
		name       string
		email      string
		password   string
		buildStubs func(d userDeps)
		check      func(t *testing.T, s service.Session, err error)
	}{
		{
			name:     "right password gives a session",
			email:    " JAKE@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "JAKE@jake.jake").Return(jake, nil)
				d.hasher.EXPECT().Verify(password, jake.PasswordHash).Return(true, false, nil)
				d.hasher.EXPECT().Hash(gomock.Any()).Times(0)
				d.repo.EXPECT().ReplacePasswordHash(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				expectSessionWhilePassword(d, jake.PasswordHash)
			},
			check: func(t *testing.T, s service.Session, err error) {
				if err != nil {
					t.Fatalf("Login: %v", err)
				}
				if want := (service.Session{User: jake, Token: "TOKEN", Refresh: "REFRESH"}); !reflect.DeepEqual(s, want) {
					t.Errorf("session = %+v, want %+v", s, want)
				}
			},
		},
		{
			name:     "unknown email is invalid credentials and still costs one verification",
			email:    "nobody@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "nobody@jake.jake").
					Return(domain.User{}, fmt.Errorf("get user: %w", domain.ErrNotFound))
				d.hasher.EXPECT().Hash(gomock.Any()).Return("DUMMY", nil)
				d.hasher.EXPECT().Verify(password, "DUMMY").Return(false, false, nil).Times(1)
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireErrorIs(t, err, domain.ErrInvalidCredentials)
			},
		},
		{
			name:     "wrong password is invalid credentials",
			email:    "jake@jake.jake",
			password: "wrong-password",
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "jake@jake.jake").Return(jake, nil)
				d.hasher.EXPECT().Verify("wrong-password", jake.PasswordHash).Return(false, false, nil)
				d.hasher.EXPECT().Hash(gomock.Any()).Times(0)
				d.repo.EXPECT().ReplacePasswordHash(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireErrorIs(t, err, domain.ErrInvalidCredentials)
			},
		},
		{
			name:     "weak stored hash is upgraded in place",
			email:    "jake@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "jake@jake.jake").Return(jake, nil)
				d.hasher.EXPECT().Verify(password, jake.PasswordHash).Return(true, true, nil)
				d.hasher.EXPECT().Hash(password).Return("NEWHASH", nil)
				d.repo.EXPECT().ReplacePasswordHash(gomock.Any(), jake.ID, jake.PasswordHash, "NEWHASH").Return(nil)
				expectSessionWhilePassword(d, "NEWHASH")
			},
			check: func(t *testing.T, s service.Session, err error) {
				if err != nil || s.Token != "TOKEN" {
					t.Fatalf("Login = (%+v, %v), want a session", s, err)
				}
			},
		},
		{
			name:     "failed rehash store does not fail the login",
			email:    "jake@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "jake@jake.jake").Return(jake, nil)
				d.hasher.EXPECT().Verify(password, jake.PasswordHash).Return(true, true, nil)
				d.hasher.EXPECT().Hash(password).Return("NEWHASH", nil)
				d.repo.EXPECT().ReplacePasswordHash(gomock.Any(), jake.ID, jake.PasswordHash, "NEWHASH").
					Return(errors.New("connection reset"))
				expectSessionWhilePassword(d, jake.PasswordHash)
			},
			check: func(t *testing.T, s service.Session, err error) {
				if err != nil || s.Token != "TOKEN" {
					t.Fatalf("Login = (%+v, %v), want a session", s, err)
				}
			},
		},
		{
			name:     "a password changed while the login verified the old one gives no session",
			email:    "jake@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "jake@jake.jake").Return(jake, nil)
				d.hasher.EXPECT().Verify(password, jake.PasswordHash).Return(true, false, nil)
				// A reset, takeover or password change committed meanwhile: the hash is not held.
				d.repo.EXPECT().HoldIfPasswordIn(gomock.Any(), gomock.Any(), jake.ID, jake.PasswordHash).Return(false, nil)
				d.tokens.EXPECT().StartIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, s service.Session, err error) {
				requireErrorIs(t, err, domain.ErrInvalidCredentials)
			},
		},
		{
			name:     "failed rehash hashing does not fail the login",
			email:    "jake@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "jake@jake.jake").Return(jake, nil)
				d.hasher.EXPECT().Verify(password, jake.PasswordHash).Return(true, true, nil)
				d.hasher.EXPECT().Hash(password).Return("", errors.New("entropy exhausted"))
				d.repo.EXPECT().ReplacePasswordHash(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				expectSessionWhilePassword(d, jake.PasswordHash)
			},
			check: func(t *testing.T, s service.Session, err error) {
				if err != nil || s.Token != "TOKEN" {
					t.Fatalf("Login = (%+v, %v), want a session", s, err)
				}
			},
		},
		{
			name:       "blank fields are a validation error",
			email:      "  ",
			password:   "",
			buildStubs: untouched,
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{
					"email":    {"can't be blank"},
					"password": {"can't be blank"},
				})
			},
		},
		{
			name:       "blank password alone",
			email:      "jake@jake.jake",
			password:   "",
			buildStubs: untouched,
			check: func(t *testing.T, _ service.Session, err error) {
				requireValidation(t, err, map[string][]string{"password": {"can't be blank"}})
			},
		},
		{
			name:       "password longer than any valid one is refused without hashing",
			email:      "jake@jake.jake",
			password:   strings.Repeat("p", domain.MaxPasswordLen+1),
			buildStubs: untouched,
			check: func(t *testing.T, _ service.Session, err error) {
				requireErrorIs(t, err, domain.ErrInvalidCredentials)
			},
		},
		{
			name:     "storage failure passes through without verifying",
			email:    "jake@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "jake@jake.jake").
					Return(domain.User{}, fmt.Errorf("get user: %w", domain.ErrUnavailable))
				d.hasher.EXPECT().Verify(gomock.Any(), gomock.Any()).Times(0)
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireErrorIs(t, err, domain.ErrUnavailable)
			},
		},
		{
			name:     "unreadable stored hash is an internal error, not bad credentials",
			email:    "jake@jake.jake",
			password: password,
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByEmail(gomock.Any(), "jake@jake.jake").Return(jake, nil)
				d.hasher.EXPECT().Verify(password, jake.PasswordHash).Return(false, false, errors.New("malformed hash"))
				d.tokens.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ service.Session, err error) {
				requireNoValidation(t, err)
				if errors.Is(err, domain.ErrInvalidCredentials) {
					t.Errorf("error = %v, want an internal error", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newUserService(t)
			tc.buildStubs(d)
			s, err := svc.Login(context.Background(), tc.email, tc.password)
			tc.check(t, s, err)
		})
	}
}

func TestUserService_Login_DummyHashIsMadeOnce(t *testing.T) {
	t.Parallel()
	svc, d := newUserService(t)
	d.repo.EXPECT().GetByEmail(gomock.Any(), gomock.Any()).Return(domain.User{}, domain.ErrNotFound).Times(3)
	d.hasher.EXPECT().Hash(gomock.Any()).Return("DUMMY", nil).Times(1)
	d.hasher.EXPECT().Verify(gomock.Any(), "DUMMY").Return(false, false, nil).Times(3)

	for i := range 3 {
		_, err := svc.Login(context.Background(), fmt.Sprintf("nobody%d@jake.jake", i), "jakejake")
		requireErrorIs(t, err, domain.ErrInvalidCredentials)
	}
}

func TestUserService_Authenticate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		buildStubs func(d userDeps)
		wantID     int64
		wantErr    error
	}{
		{
			name: "valid token for an existing user",
			buildStubs: func(d userDeps) {
				d.tokens.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{UserID: jake.ID, SessionID: "sid"}, nil)
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
			},
			wantID: jake.ID,
		},
		{
			name: "bad token",
			buildStubs: func(d userDeps) {
				d.tokens.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{}, fmt.Errorf("%w: token is expired", domain.ErrUnauthorized))
				d.repo.EXPECT().GetByID(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name: "a storage failure while checking the session is passed on, not passed off as unauthorized",
			buildStubs: func(d userDeps) {
				d.tokens.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{}, errSurprise)
				d.repo.EXPECT().GetByID(gomock.Any(), gomock.Any()).Times(0)
			},
			wantErr: errSurprise,
		},
		{
			name: "token of a deleted user",
			buildStubs: func(d userDeps) {
				d.tokens.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{UserID: jake.ID, SessionID: "sid"}, nil)
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(domain.User{}, fmt.Errorf("get user: %w", domain.ErrNotFound))
			},
			wantErr: domain.ErrUnauthorized,
		},
		{
			name: "storage outage is not reported as a bad token",
			buildStubs: func(d userDeps) {
				d.tokens.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{UserID: jake.ID, SessionID: "sid"}, nil)
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(domain.User{}, fmt.Errorf("get user: %w", domain.ErrUnavailable))
			},
			wantErr: domain.ErrUnavailable,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newUserService(t)
			tc.buildStubs(d)
			cred, err := svc.Authenticate(context.Background(), "TOKEN")
			id := cred.UserID
			if tc.wantErr == nil && err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
			}
			if id != tc.wantID {
				t.Errorf("id = %d, want %d", id, tc.wantID)
			}
		})
	}
}

func TestUserService_Current(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		repoErr  error
		wantUser domain.User
		wantErr  error
	}{
		{name: "existing user", wantUser: jake},
		{name: "deleted user is unauthorized", repoErr: fmt.Errorf("get: %w", domain.ErrNotFound), wantErr: domain.ErrUnauthorized},
		{name: "storage outage passes through", repoErr: fmt.Errorf("get: %w", domain.ErrUnavailable), wantErr: domain.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newUserService(t)
			if tc.repoErr != nil {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(domain.User{}, tc.repoErr)
			} else {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
			}
			u, err := svc.Current(context.Background(), jake.ID)
			if tc.wantErr != nil {
				requireErrorIs(t, err, tc.wantErr)
				return
			}
			if err != nil || !reflect.DeepEqual(u, tc.wantUser) {
				t.Errorf("Current = (%+v, %v), want (%+v, nil)", u, err, tc.wantUser)
			}
		})
	}
}

// applyChange makes a repo.Update stub behave like the real one: it applies the service's change
// function to a copy of stored and returns the result.
func applyChange(stored domain.User) func(context.Context, int64, func(*domain.User) error) (domain.User, error) {
	return func(_ context.Context, _ int64, change func(*domain.User) error) (domain.User, error) {
		u := stored
		if err := change(&u); err != nil {
			return domain.User{}, err
		}
		return u, nil
	}
}

// applyChangeTx is applyChange for UpdateIn: the change runs in the caller's unit of work.
func applyChangeTx(stored domain.User) func(context.Context, service.Tx, int64, func(*domain.User) error) (domain.User, error) {
	return func(ctx context.Context, _ service.Tx, id int64, change func(*domain.User) error) (domain.User, error) {
		return applyChange(stored)(ctx, id, change)
	}
}

type noHooksTx struct{}

func (noHooksTx) AfterCommit(func(context.Context)) {}

// stepUpPasses stubs a current password check that succeeds against jake's stored hash.
func stepUpPasses(d userDeps) {
	d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
	d.repo.EXPECT().GetByEmail(gomock.Any(), jake.Email).Return(jake, nil)
	d.hasher.EXPECT().Verify("current-password", jake.PasswordHash).Return(true, false, nil)
}

// currentSession is the credential every Update test runs with.
var currentSession = domain.Credential{UserID: jake.ID, SessionID: "sid-current"}

func TestUserService_Update(t *testing.T) {
	t.Parallel()
	with := func(change func(*domain.User)) domain.User {
		u := jake
		change(&u)
		return u
	}

	tests := []struct {
		name       string
		in         service.UpdateUserInput
		buildStubs func(d userDeps)
		check      func(t *testing.T, u domain.User, err error)
	}{
		{
			name: "only the bio changes",
			in:   service.UpdateUserInput{Bio: ptr("I like to skateboard")},
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash(gomock.Any()).Times(0)
				d.repo.EXPECT().Update(gomock.Any(), jake.ID, gomock.Any()).DoAndReturn(applyChange(jake))
			},
			check: wantUser(with(func(u *domain.User) { u.Bio = "I like to skateboard" })),
		},
		{
			// An image sent is recorded with the change (the avatar's upload references), so the
			// change runs in a unit of work the use case opens.
			name: "empty bio and image clear them",
			in:   service.UpdateUserInput{Bio: ptr(""), Image: ptr("")},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), jake.ID, gomock.Any()).DoAndReturn(applyChangeTx(jake))
			},
			check: wantUser(with(func(u *domain.User) { u.Bio, u.Image = "", "" })),
		},
		{
			name: "no fields changes nothing",
			in:   service.UpdateUserInput{},
			buildStubs: func(d userDeps) {
				d.hasher.EXPECT().Hash(gomock.Any()).Times(0)
				d.repo.EXPECT().Update(gomock.Any(), jake.ID, gomock.Any()).DoAndReturn(applyChange(jake))
			},
			check: wantUser(jake),
		},
		{
			name: "every field changes, email trimmed, password hashed before the update",
			in: service.UpdateUserInput{
				Email:           ptr("  Jacob@Example.COM "),
				Username:        ptr("jacob"),
				Password:        ptr("new-password"),
				Bio:             ptr("new bio"),
				Image:           ptr("https://example.com/jacob.png"),
				CurrentPassword: "current-password",
			},
			buildStubs: func(d userDeps) {
				gomock.InOrder(
					d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil),
					d.repo.EXPECT().GetByEmail(gomock.Any(), jake.Email).Return(jake, nil),
					d.hasher.EXPECT().Verify("current-password", jake.PasswordHash).Return(true, false, nil),
					d.hasher.EXPECT().Hash("new-password").Return("NEWHASH", nil),
					d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), jake.ID, gomock.Any()).DoAndReturn(applyChangeTx(jake)),
				)
				// Every other session and every API key ends with the change; this session stays.
				d.tokens.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), jake.ID, "sid-current", true).Return(nil)
			},
			check: wantUser(with(func(u *domain.User) {
				u.Email, u.Username, u.PasswordHash = "Jacob@Example.COM", "jacob", "NEWHASH"
				u.Bio, u.Image = "new bio", "https://example.com/jacob.png"
			})),
		},
		{
			name: "invalid fields are all reported and nothing is stored",
			in: service.UpdateUserInput{
				Email:    ptr("jake@"),
				Username: ptr(""),
				Password: ptr("short"),
				Bio:      ptr(strings.Repeat("b", domain.MaxBioLen+1)),
				Image:    ptr("javascript:alert(1)"),
			},
			buildStubs: untouched,
			check: func(t *testing.T, _ domain.User, err error) {
				requireValidation(t, err, map[string][]string{
					"email":    {"is invalid"},
					"username": {"can't be blank"},
					"password": {"is too short (minimum is 8 characters)"},
					"bio":      {"is too long (maximum is 4000 characters)"},
					"image":    {"must be an https URL or the url of one of your uploads (/media/...)"},
				})
			},
		},
		{
			name: "email taken by someone else",
			in:   service.UpdateUserInput{Email: ptr("taken@jake.jake"), CurrentPassword: "current-password"},
			buildStubs: func(d userDeps) {
				stepUpPasses(d)
				d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), jake.ID, gomock.Any()).
					Return(domain.User{}, fmt.Errorf("update user: %w", domain.ErrEmailTaken))
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireValidation(t, err, map[string][]string{"email": {"has already been taken"}})
			},
		},
		{
			name: "username taken by someone else",
			in:   service.UpdateUserInput{Username: ptr("taken")},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().Update(gomock.Any(), jake.ID, gomock.Any()).
					Return(domain.User{}, fmt.Errorf("update user: %w", domain.ErrUsernameTaken))
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireValidation(t, err, map[string][]string{"username": {"has already been taken"}})
			},
		},
		{
			name: "deleted user is unauthorized",
			in:   service.UpdateUserInput{Bio: ptr("x")},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().Update(gomock.Any(), jake.ID, gomock.Any()).
					Return(domain.User{}, fmt.Errorf("update user: %w", domain.ErrNotFound))
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireErrorIs(t, err, domain.ErrUnauthorized)
			},
		},
		{
			name: "hashing failure stops before storage",
			in:   service.UpdateUserInput{Password: ptr("new-password"), CurrentPassword: "current-password"},
			buildStubs: func(d userDeps) {
				stepUpPasses(d)
				d.hasher.EXPECT().Hash("new-password").Return("", errors.New("entropy exhausted"))
				d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireNoValidation(t, err)
			},
		},
		{
			name: "a new password without the current one is refused before any hashing or storage",
			in:   service.UpdateUserInput{Password: ptr("new-password")},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
				untouched(d)
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireValidation(t, err, map[string][]string{"currentPassword": {"is required to change email or password"}})
			},
		},
		{
			name: "a new email without the current password is refused",
			in:   service.UpdateUserInput{Email: ptr("jacob@example.com"), Bio: ptr("x")},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
				untouched(d)
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireValidation(t, err, map[string][]string{"currentPassword": {"is required to change email or password"}})
			},
		},
		{
			name: "a wrong current password is forbidden and changes nothing",
			in:   service.UpdateUserInput{Password: ptr("new-password"), CurrentPassword: "guess"},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
				d.repo.EXPECT().GetByEmail(gomock.Any(), jake.Email).Return(jake, nil)
				d.hasher.EXPECT().Verify("guess", jake.PasswordHash).Return(false, false, nil)
				d.hasher.EXPECT().Hash(gomock.Any()).Times(0)
				d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.repo.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireErrorIs(t, err, domain.ErrWrongCurrentPassword)
			},
		},
		{
			name: "the email sent back unchanged (RealWorld front ends send the whole user) needs no current password",
			in:   service.UpdateUserInput{Email: ptr("Jake@Jake.jake"), Bio: ptr("new bio")},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
				d.hasher.EXPECT().Verify(gomock.Any(), gomock.Any()).Times(0)
				d.repo.EXPECT().Update(gomock.Any(), jake.ID, gomock.Any()).DoAndReturn(applyChange(jake))
				d.tokens.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: wantUser(with(func(u *domain.User) { u.Bio = "new bio" })),
		},
		{
			name: "a login code sent to the account's own address stands in for the current password",
			in:   service.UpdateUserInput{Password: ptr("new-password"), Code: "123456"},
			buildStubs: func(d userDeps) {
				gomock.InOrder(
					d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil),
					d.repo.EXPECT().GetByEmail(gomock.Any(), jake.Email).Return(jake, nil),
					d.codes.EXPECT().VerifyOwnCode(gomock.Any(), jake, "123456").Return(nil),
					d.hasher.EXPECT().Hash("new-password").Return("NEWHASH", nil),
					d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), jake.ID, gomock.Any()).DoAndReturn(applyChangeTx(jake)),
				)
				d.hasher.EXPECT().Verify(gomock.Any(), gomock.Any()).Times(0)
				d.tokens.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), jake.ID, "sid-current", true).Return(nil)
			},
			check: wantUser(with(func(u *domain.User) { u.PasswordHash = "NEWHASH" })),
		},
		{
			name: "a wrong step-up code is 403 and nothing changes",
			in:   service.UpdateUserInput{Email: ptr("new@example.com"), Code: "654321"},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
				d.repo.EXPECT().GetByEmail(gomock.Any(), jake.Email).Return(jake, nil)
				d.codes.EXPECT().VerifyOwnCode(gomock.Any(), jake, "654321").Return(&domain.CodeError{Reason: domain.CodeInvalid})
				d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				d.repo.EXPECT().Update(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireErrorIs(t, err, domain.ErrWrongStepUpCode)
			},
		},
		{
			name: "a step-up code for a locked target keeps its 429",
			in:   service.UpdateUserInput{Password: ptr("new-password"), Code: "654321"},
			buildStubs: func(d userDeps) {
				d.repo.EXPECT().GetByID(gomock.Any(), jake.ID).Return(jake, nil)
				d.repo.EXPECT().GetByEmail(gomock.Any(), jake.Email).Return(jake, nil)
				d.codes.EXPECT().VerifyOwnCode(gomock.Any(), jake, "654321").Return(&domain.CodeError{Reason: domain.CodeLocked, RetryAfter: time.Hour})
				d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.User, err error) {
				var ce *domain.CodeError
				if !errors.As(err, &ce) || ce.Reason != domain.CodeLocked {
					t.Fatalf("err %v, want the locked code error", err)
				}
			},
		},
		{
			name: "a password changed by another session since the check is refused, and no session ends",
			in:   service.UpdateUserInput{Password: ptr("new-password"), CurrentPassword: "current-password"},
			buildStubs: func(d userDeps) {
				stepUpPasses(d)
				d.hasher.EXPECT().Hash("new-password").Return("NEWHASH", nil)
				moved := with(func(u *domain.User) { u.PasswordHash = "CHANGED-MEANWHILE" })
				d.repo.EXPECT().UpdateIn(gomock.Any(), gomock.Any(), jake.ID, gomock.Any()).DoAndReturn(applyChangeTx(moved))
				d.tokens.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.User, err error) {
				requireErrorIs(t, err, domain.ErrWrongCurrentPassword)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newUserService(t)
			tc.buildStubs(d)
			u, err := svc.Update(context.Background(), currentSession, tc.in)
			tc.check(t, u, err)
		})
	}

	t.Run("an API key changes nothing", func(t *testing.T) {
		t.Parallel()
		svc, d := newUserService(t)
		untouched(d)
		d.repo.EXPECT().GetByID(gomock.Any(), gomock.Any()).Times(0)
		key := domain.Credential{UserID: jake.ID, APIKeyID: 3, Scopes: []domain.Scope{domain.ScopeWrite}}
		_, err := svc.Update(context.Background(), key, service.UpdateUserInput{Password: ptr("new-password"), CurrentPassword: "current-password"})
		requireErrorIs(t, err, domain.ErrForbidden)
	})
}

func wantUser(want domain.User) func(t *testing.T, u domain.User, err error) {
	return func(t *testing.T, u domain.User, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if !reflect.DeepEqual(u, want) {
			t.Errorf("user = %+v, want %+v", u, want)
		}
	}
}

var errSurprise = errors.New("surprise")

// expectSessionWhilePassword stubs a login's session: started in the unit of work that holds
// the user's row while its password hash is still hash.
func expectSessionWhilePassword(d userDeps, hash string) {
	d.repo.EXPECT().HoldIfPasswordIn(gomock.Any(), gomock.Any(), jake.ID, hash).Return(true, nil)
	d.tokens.EXPECT().StartIn(gomock.Any(), gomock.Any(), jake.ID).Return(domain.Tokens{Access: "TOKEN", Refresh: "REFRESH"}, nil)
}
