package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type accountDeps struct {
	repo     *mocks.MockAccountCodeRepository
	hasher   *mocks.MockPasswordHasher
	sessions *mocks.MockRevocationRecorder
}

func newAccountService(t *testing.T) (*service.AccountService, accountDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := accountDeps{repo: mocks.NewMockAccountCodeRepository(ctrl), hasher: mocks.NewMockPasswordHasher(ctrl),
		sessions: mocks.NewMockRevocationRecorder(ctrl)}
	return service.NewAccountService(d.repo, d.hasher, d.sessions, testCodeKeys, discardLogger), d
}

// noWrites proves that rejected input changes nothing and revokes nothing.
func (d accountDeps) noWrites() {
	a := gomock.Any()
	d.repo.EXPECT().IssueAccountCode(a, a, a, a, a, a, a, a).Times(0)
	d.repo.EXPECT().VerifyEmail(a, a, a, a, a).Times(0)
	d.repo.EXPECT().ResetPassword(a, a, a, a, a, a).Times(0)
	d.repo.EXPECT().TakeOverUnverified(a, a, a).Times(0)
	d.sessions.EXPECT().RecordRevoked(a, a).Times(0)
}

func TestAccountService_SendVerification(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	for _, tc := range []struct {
		name  string
		user  domain.User
		field string
	}{
		{"verified_already", domain.User{ID: 7, Email: "jake@jake.jake", EmailVerified: true}, "email"},
		{"phone_account_has_no_mailbox", domain.User{ID: 7, Email: "4915112345678@phone.invalid"}, "email"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newAccountService(t)
			d.repo.EXPECT().GetByIDUncached(a, int64(7)).Return(tc.user, nil)
			d.noWrites()
			var verr *domain.ValidationError
			if err := svc.SendVerification(context.Background(), 7); !errors.As(err, &verr) || len(verr.Fields[tc.field]) == 0 {
				t.Fatalf("err %v, want a validation error on %s", err, tc.field)
			}
		})
	}
	t.Run("stores_the_hash_and_queues_the_code_sealed", func(t *testing.T) {
		t.Parallel()
		svc, d := newAccountService(t)
		d.repo.EXPECT().GetByIDUncached(a, int64(7)).Return(domain.User{ID: 7, Email: "jake@jake.jake"}, nil)
		d.repo.EXPECT().IssueAccountCode(a, int64(7), domain.PurposeVerifyEmail, "jake@jake.jake", a, domain.VerifyEmailValidity, domain.AccountCodeResend, a).
			DoAndReturn(func(_ context.Context, _ int64, _ domain.AccountCodePurpose, _ string, hash []byte, _, _ time.Duration, j domain.NewJob) error {
				var p service.AccountMailPayload
				if err := json.Unmarshal(j.Payload, &p); err != nil || j.Kind != service.JobKindSendAccountMail {
					t.Fatalf("job %s %s: %v", j.Kind, j.Payload, err)
				}
				if !j.DeleteWhenDone || strings.Contains(string(j.Payload), `"code"`) {
					t.Fatalf("job %s keeps its row or carries the code in plain text", j.Payload)
				}
				code, err := testCodeKeys.Open(p.Address, p.SealedCode)
				if err != nil {
					t.Fatalf("sealed code: %v", err)
				}
				want, ok := domain.HashAccountCode(code)
				if !ok || string(want) != string(hash) || p.Address != "jake@jake.jake" || p.Purpose != "verify_email" {
					t.Fatalf("payload %+v does not match the stored hash", p)
				}
				return nil
			})
		if err := svc.SendVerification(context.Background(), 7); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAccountService_RequestPasswordReset(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	t.Run("invalid_email_reaches_nothing", func(t *testing.T) {
		t.Parallel()
		svc, d := newAccountService(t)
		d.repo.EXPECT().GetByEmail(a, a).Times(0)
		d.noWrites()
		var verr *domain.ValidationError
		if err := svc.RequestPasswordReset(context.Background(), "not an email"); !errors.As(err, &verr) {
			t.Fatalf("err %v", err)
		}
	})
	for _, tc := range []struct {
		name   string
		lookup func(d accountDeps)
	}{
		{"unknown_email", func(d accountDeps) {
			d.repo.EXPECT().GetByEmail(a, "Nobody@Example.com").Return(domain.User{}, domain.ErrNotFound) // as typed: the repository compares canonical forms
		}},
		{"sent_within_the_minute", func(d accountDeps) {
			d.repo.EXPECT().GetByEmail(a, "Nobody@Example.com").Return(domain.User{ID: 7, Email: "nobody@example.com"}, nil)
			d.repo.EXPECT().IssueAccountCode(a, a, a, a, a, a, a, a).Return(&domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: time.Minute})
		}},
	} {
		t.Run(tc.name+"_is_not_told", func(t *testing.T) {
			t.Parallel()
			svc, d := newAccountService(t)
			tc.lookup(d)
			if err := svc.RequestPasswordReset(context.Background(), " Nobody@Example.com"); err != nil {
				t.Fatalf("err %v, want nil: the answer must not tell", err)
			}
		})
	}
}

func TestAccountService_ConfirmPasswordReset(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	for _, tc := range []struct {
		name, email, code, password string
		want                        func(error) bool
	}{
		{"blank_email", "", "ABCDE-23456", "a new password", isValidation("email")},
		{"weak_password", "jake@jake.jake", "ABCDE-23456", "short", isValidation("password")},
		{"malformed_code", "jake@jake.jake", "12345", "a new password", func(err error) bool { return errors.Is(err, domain.ErrAccountCodeInvalid) }},
	} {
		t.Run("rejected/"+tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newAccountService(t)
			d.repo.EXPECT().GetByEmail(a, a).Times(0)
			d.hasher.EXPECT().Hash(a).Times(0)
			d.noWrites()
			if err := svc.ConfirmPasswordReset(context.Background(), tc.email, tc.code, tc.password); !tc.want(err) {
				t.Fatalf("err %v", err)
			}
		})
	}
	// An unknown email costs the same Argon2 hash as a known one with a wrong code, so the answer's
	// timing does not tell which emails have accounts (it took 1.6 ms against 30 ms).
	t.Run("unknown_email_is_an_invalid_code_after_the_same_work", func(t *testing.T) {
		t.Parallel()
		svc, d := newAccountService(t)
		d.repo.EXPECT().GetByEmail(a, "nobody@example.com").Return(domain.User{}, domain.ErrNotFound)
		d.hasher.EXPECT().Hash("a new password").Return("hashed", nil).Times(1)
		d.noWrites()
		if err := svc.ConfirmPasswordReset(context.Background(), "nobody@example.com", "ABCDE-23456", "a new password"); !errors.Is(err, domain.ErrAccountCodeInvalid) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("success_revokes_every_session_everywhere", func(t *testing.T) {
		t.Parallel()
		svc, d := newAccountService(t)
		hash, _ := domain.HashAccountCode("abcde 23456")
		d.repo.EXPECT().GetByEmail(a, "jake@jake.jake").Return(domain.User{ID: 7, Email: "jake@jake.jake"}, nil)
		d.hasher.EXPECT().Hash("a new password").Return("hashed", nil)
		// Wrong guesses count for the client that made them (the HTTP layer names it).
		d.repo.EXPECT().ResetPassword(a, int64(7), hash, "192.0.2.1", domain.AccountCodeAttempts, "hashed").Return([]string{"s1", "s2"}, nil)
		d.sessions.EXPECT().RecordRevoked(a, []string{"s1", "s2"})
		ctx := service.WithRequester(context.Background(), "192.0.2.1")
		if err := svc.ConfirmPasswordReset(ctx, "jake@jake.jake", "ABCDE-23456", "a new password"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAccountService_ClaimByCodeLogin(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	for _, tc := range []struct {
		name    string
		channel string
		user    domain.User
	}{
		{"verified_email", "email", domain.User{ID: 7, EmailVerified: true}},
		{"phone_login", "phone", domain.User{ID: 7}},
	} {
		t.Run("leaves_alone/"+tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newAccountService(t)
			d.noWrites()
			if err := svc.ClaimByCodeLogin(context.Background(), tc.channel, tc.user, "random"); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("takes_over_an_unverified_email", func(t *testing.T) {
		t.Parallel()
		svc, d := newAccountService(t)
		d.hasher.EXPECT().Hash(a).Times(0) // the code login's random hash is reused
		d.repo.EXPECT().TakeOverUnverified(a, int64(7), "random").Return([]string{"attacker"}, true, nil)
		d.sessions.EXPECT().RecordRevoked(a, []string{"attacker"})
		if err := svc.ClaimByCodeLogin(context.Background(), "email", domain.User{ID: 7}, "random"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCodeLogin_ClaimsBeforeTheSessionStarts: the takeover must come first, or it would revoke the
// session the login is about to hand out; and a failed takeover starts no session.
func TestCodeLogin_ClaimsBeforeTheSessionStarts(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	ctrl := gomock.NewController(t)
	codes, accounts, hasher := mocks.NewMockCodeStore(ctrl), mocks.NewMockCodeAccounts(ctrl), mocks.NewMockPasswordHasher(ctrl)
	sessions, claims := mocks.NewMockSessionManager(ctrl), mocks.NewMockEmailClaims(ctrl)
	svc := service.NewCodeLoginService(codes, nil, accounts, hasher, sessions, claims, testCodeKeys, discardLogger, time.Now)
	user := domain.User{ID: 7, Email: "victim@example.com"}
	codes.EXPECT().Check(a, a, a).Return(nil).Times(2)
	hasher.EXPECT().Hash(a).Return("h", nil).Times(2)
	accounts.EXPECT().FindOrCreateByTarget(a, a, a).Return(user, nil).Times(2)
	gomock.InOrder(
		claims.EXPECT().ClaimByCodeLogin(a, "email", user, "h").Return(nil),
		sessions.EXPECT().Start(a, int64(7)).Return(domain.Tokens{Access: "t", Refresh: "r"}, nil),
	)
	if _, err := svc.Login(context.Background(), "victim@example.com", "", "123456"); err != nil {
		t.Fatal(err)
	}
	down := errors.New("database down")
	claims.EXPECT().ClaimByCodeLogin(a, a, a, a).Return(down)
	if _, err := svc.Login(context.Background(), "victim@example.com", "", "123456"); !errors.Is(err, down) {
		t.Fatalf("err %v", err)
	}
}

func isValidation(field string) func(error) bool {
	return func(err error) bool {
		var verr *domain.ValidationError
		return errors.As(err, &verr) && len(verr.Fields[field]) > 0
	}
}
