package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type codeDeps struct {
	codes    *mocks.MockCodeStore
	jobs     *mocks.MockJobEnqueuer
	accounts *mocks.MockCodeAccounts
	hasher   *mocks.MockPasswordHasher
	sessions *mocks.MockSessionManager
	claims   *mocks.MockEmailClaims
}

func newCodeLoginService(t *testing.T) (*service.CodeLoginService, codeDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := codeDeps{
		codes: mocks.NewMockCodeStore(ctrl), jobs: mocks.NewMockJobEnqueuer(ctrl), accounts: mocks.NewMockCodeAccounts(ctrl),
		hasher: mocks.NewMockPasswordHasher(ctrl), sessions: mocks.NewMockSessionManager(ctrl), claims: mocks.NewMockEmailClaims(ctrl),
	}
	// Taking over unverified accounts has tests of its own (account_test.go).
	d.claims.EXPECT().ClaimByCodeLogin(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil).AnyTimes()
	return service.NewCodeLoginService(d.codes, d.jobs, d.accounts, d.hasher, d.sessions, d.claims, testCodeKeys, discardLogger, time.Now), d
}

var testCodeKeys = func() service.CodeKeys {
	k, err := service.NewCodeKeys([]byte("test-secret-of-at-least-32-bytes-long"))
	if err != nil {
		panic(err)
	}
	return k
}()

// noAccount answers the Send's lookup of the typed email: nobody has that mailbox yet.
func noAccount(d codeDeps) {
	d.accounts.EXPECT().GetByEmail(gomock.Any(), gomock.Any()).Return(domain.User{}, domain.ErrNotFound).AnyTimes()
}

// sentPayload decodes a send_code job and opens its code.
func sentPayload(t *testing.T, j domain.NewJob) (service.SendCodePayload, string) {
	t.Helper()
	var p service.SendCodePayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		t.Fatalf("payload %s: %v", j.Payload, err)
	}
	code, err := testCodeKeys.Open(p.Address, p.SealedCode)
	if err != nil || strings.Contains(string(j.Payload), code) {
		t.Fatalf("payload %s: the sealed code %q (%v) must open and not be in the payload", j.Payload, code, err)
	}
	return p, code
}

func TestCodeLogin_Send(t *testing.T) {
	t.Parallel()
	ctx := service.WithRequester(context.Background(), "192.0.2.1")

	// Bad input never reaches the store or the queue (the mocks expect nothing).
	for _, tc := range []struct {
		name, email, phone, field string
	}{
		{"bad_email", "not-an-email", "", "email"},
		{"reserved_domain", "4915112345678@phone.invalid", "", "email"},
		{"idna_refuses_the_domain", "a@b_c.com", "", "email"},
		{"fullwidth_local_part", "ａｌｉｃｅ@example.com", "", "email"},
		{"mixed_script_local_part", "pаypal@example.com", "", "email"},
		{"bad_phone", "", "0151 1234", "phone"},
		{"phone_without_country_code", "", "15112345678", "phone"},
		{"both", "a@example.com", "+4915112345678", "body"},
		{"neither", "", "  ", "body"},
	} {
		t.Run("invalid/"+tc.name, func(t *testing.T) {
			t.Parallel()
			svc, _ := newCodeLoginService(t)
			err := svc.Send(ctx, tc.email, tc.phone)
			var verr *domain.ValidationError
			if !errors.As(err, &verr) || len(verr.Fields[tc.field]) == 0 {
				t.Fatalf("error = %v, want a validation error on %q", err, tc.field)
			}
		})
	}

	t.Run("stores_a_hash_and_queues_the_sealed_code", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			email, phone, target, channel, address string
		}{
			{email: "  Alice@Example.COM ", target: "email:alice@example.com", channel: "email", address: "Alice@Example.COM"},
			{phone: "+49 151 1234 5678", target: "phone:+4915112345678", channel: "phone", address: "+4915112345678"},
		} {
			svc, d := newCodeLoginService(t)
			noAccount(d)
			var stored string
			d.codes.EXPECT().Put(gomock.Any(), tc.target, "192.0.2.1", gomock.Any(), false).DoAndReturn(func(_ context.Context, _, _, code string, _ bool) error {
				stored = code
				return nil
			})
			d.jobs.EXPECT().Enqueue(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, j domain.NewJob) (bool, error) {
				p, code := sentPayload(t, j)
				if domain.ValidateCode(code) != nil || stored != testCodeKeys.Hash(tc.target, code) {
					t.Fatalf("sent %q and stored %q, want six digits and their HMAC", code, stored)
				}
				if j.Queue != service.QueueDefault || j.Kind != service.JobKindSendCode || p.Channel != tc.channel || p.Address != tc.address ||
					p.Purpose != service.CodePurposeLogin || j.MaxAttempts < 1 || !j.DeleteWhenDone {
					t.Fatalf("enqueued %+v with payload %+v, want a %s job to %s that is deleted when done", j, p, service.JobKindSendCode, tc.address)
				}
				return true, nil
			})
			if err := svc.Send(ctx, tc.email, tc.phone); err != nil {
				t.Fatalf("send to %s: %v", tc.target, err)
			}
		}
	})
	// The code for a mailbox that has an account goes to the account's address as stored, never to
	// the spelling typed (a fullwidth domain is the same mailbox, by IDNA).
	t.Run("goes_to_the_stored_address", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		d.accounts.EXPECT().GetByEmail(gomock.Any(), "victim@ｅｘａｍｐｌｅ.com").Return(domain.User{ID: 3, Email: "Victim@Example.com"}, nil)
		d.codes.EXPECT().Put(gomock.Any(), "email:victim@example.com", gomock.Any(), gomock.Any(), false).Return(nil)
		d.jobs.EXPECT().Enqueue(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, j domain.NewJob) (bool, error) {
			if p, _ := sentPayload(t, j); p.Address != "Victim@Example.com" {
				t.Fatalf("the code goes to %q, want the stored Victim@Example.com", p.Address)
			}
			return true, nil
		})
		if err := svc.Send(ctx, "victim@ｅｘａｍｐｌｅ.com", ""); err != nil {
			t.Fatal(err)
		}
	})
	// Past the target's failure budget a six-digit code is refused: the send makes a strong one,
	// which the lock does not apply to.
	t.Run("locked_target_gets_a_strong_code", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		noAccount(d)
		var strongHash string
		gomock.InOrder(
			d.codes.EXPECT().Put(gomock.Any(), "email:a@example.com", "192.0.2.1", gomock.Any(), false).
				Return(&domain.CodeError{Reason: domain.CodeLocked, RetryAfter: time.Hour}),
			d.codes.EXPECT().Put(gomock.Any(), "email:a@example.com", "192.0.2.1", gomock.Any(), true).
				DoAndReturn(func(_ context.Context, _, _, hash string, _ bool) error { strongHash = hash; return nil }),
		)
		d.jobs.EXPECT().Enqueue(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, j domain.NewJob) (bool, error) {
			_, code := sentPayload(t, j)
			canonical, ok := domain.CanonicalAccountCode(code)
			if !ok || strongHash != testCodeKeys.Hash("email:a@example.com", canonical) {
				t.Fatalf("sent %q, stored %q: want an XXXXX-XXXXX code and the HMAC of its canonical form", code, strongHash)
			}
			return true, nil
		})
		if err := svc.Send(ctx, "a@example.com", ""); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("codes_differ_between_sends", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		noAccount(d)
		seen := map[string]bool{}
		d.codes.EXPECT().Put(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), false).DoAndReturn(func(_ context.Context, _, _, code string, _ bool) error {
			seen[code] = true
			return nil
		}).Times(20)
		d.jobs.EXPECT().Enqueue(gomock.Any(), gomock.Any()).Return(true, nil).Times(20)
		for i := range 20 {
			if err := svc.Send(ctx, fmt.Sprintf("u%d@example.com", i), ""); err != nil {
				t.Fatal(err)
			}
		}
		if len(seen) < 18 { // 20 draws from a million collide with probability ~2e-4
			t.Fatalf("only %d distinct codes in 20 sends", len(seen))
		}
	})
	t.Run("too_soon_is_returned_and_nothing_is_queued", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		noAccount(d)
		tooSoon := &domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: time.Minute}
		d.codes.EXPECT().Put(gomock.Any(), "email:a@example.com", gomock.Any(), gomock.Any(), false).Return(tooSoon)
		err := svc.Send(ctx, "a@example.com", "")
		var ce *domain.CodeError
		if !errors.As(err, &ce) || ce.Reason != domain.CodeTooSoon || !service.IsCodeError(err) {
			t.Fatalf("error = %v, want the too-soon code error", err)
		}
	})
	t.Run("store_and_queue_failures_are_system_errors", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		noAccount(d)
		down := errors.New("redis: connection refused")
		d.codes.EXPECT().Put(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(down)
		// Fail closed: a store that cannot meter sends nothing, and the client is told 503.
		if err := svc.Send(ctx, "a@example.com", ""); !errors.Is(err, down) || !errors.Is(err, domain.ErrUnavailable) || service.IsCodeError(err) {
			t.Fatalf("store failure: %v", err)
		}
		full := errors.New("pg: too many connections")
		var stored string
		d.codes.EXPECT().Put(gomock.Any(), "email:a@example.com", "192.0.2.1", gomock.Any(), false).DoAndReturn(func(_ context.Context, _, _, code string, _ bool) error {
			stored = code
			return nil
		})
		d.jobs.EXPECT().Enqueue(gomock.Any(), gomock.Any()).Return(false, full)
		// The code that will never be delivered is withdrawn, so the user may ask again at once.
		d.codes.EXPECT().Withdraw(gomock.Any(), "email:a@example.com", "192.0.2.1", gomock.Any()).DoAndReturn(func(_ context.Context, _, _, code string) error {
			if code != stored {
				t.Errorf("withdrew %q, want the stored code %q", code, stored)
			}
			return nil
		})
		if err := svc.Send(ctx, "a@example.com", ""); !errors.Is(err, full) || service.IsCodeError(err) {
			t.Fatalf("queue failure: %v", err)
		}
	})
}

// TestCodeLogin_StepUpCodes: a step-up code goes to the account's own address as stored, under a
// key of its own (its resend interval and budgets are not the sign-in code's), and only a
// step-up code passes the step-up check.
func TestCodeLogin_StepUpCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, email, key, channel, address string
	}{
		{"email", "Owner@Straße.de", "stepup:email:owner@xn--strae-oqa.de", "email", "Owner@Straße.de"},
		{"phone", "4915112345678@phone.invalid", "stepup:phone:+4915112345678", "phone", "+4915112345678"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newCodeLoginService(t)
			u := domain.User{ID: 9, Email: tc.email}
			d.accounts.EXPECT().GetByID(gomock.Any(), int64(9)).Return(u, nil)
			var code string
			d.codes.EXPECT().Put(gomock.Any(), tc.key, gomock.Any(), gomock.Any(), false).Return(nil)
			d.jobs.EXPECT().Enqueue(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, j domain.NewJob) (bool, error) {
				var p service.SendCodePayload
				p, code = sentPayload(t, j)
				if p.Purpose != service.CodePurposeStepUp || p.Channel != tc.channel || p.Address != tc.address {
					t.Fatalf("payload %+v, want a step-up code to %s", p, tc.address)
				}
				return true, nil
			})
			if err := svc.SendStepUpCode(ctx, 9); err != nil {
				t.Fatal(err)
			}
			d.codes.EXPECT().Check(gomock.Any(), tc.key, testCodeKeys.Hash(tc.key, code)).Return(nil)
			if err := svc.VerifyOwnCode(ctx, u, code); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("unknown_user", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		d.accounts.EXPECT().GetByID(gomock.Any(), int64(5)).Return(domain.User{}, domain.ErrNotFound)
		if err := svc.SendStepUpCode(ctx, 5); !errors.Is(err, domain.ErrUnauthorized) {
			t.Fatalf("step-up code for a deleted account: %v", err)
		}
	})
}

func TestCodeLogin_Login(t *testing.T) {
	t.Parallel()
	user := domain.User{ID: 7, Email: "alice@example.com", Username: "user_ab12"}
	tokens := domain.Tokens{Access: "access-token", Refresh: "refresh-token"}

	t.Run("right_code_logs_in_creating_the_account", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		target := domain.CodeTarget{Channel: "email", Address: "ALICE@example.com"}
		gomock.InOrder(
			d.codes.EXPECT().Check(gomock.Any(), "email:alice@example.com", testCodeKeys.Hash("email:alice@example.com", "012345")).Return(nil),
			d.hasher.EXPECT().Hash(gomock.Any()).DoAndReturn(func(secret string) (string, error) {
				if len(secret) < 32 {
					t.Fatalf("the account's secret %q is too short", secret)
				}
				return "hashed", nil
			}),
			d.accounts.EXPECT().FindOrCreateByTarget(gomock.Any(), target, "hashed").Return(user, nil),
			d.sessions.EXPECT().Start(gomock.Any(), user.ID).Return(tokens, nil),
		)
		s, err := svc.Login(context.Background(), " ALICE@example.com", "", "012345")
		if err != nil {
			t.Fatal(err)
		}
		if s.User != user || s.Token != tokens.Access || s.Refresh != tokens.Refresh {
			t.Fatalf("session %+v", s)
		}
	})
	t.Run("a_strong_code_as_typed", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		d.codes.EXPECT().Check(gomock.Any(), "email:alice@example.com", testCodeKeys.Hash("email:alice@example.com", "0123456789")).Return(nil)
		d.hasher.EXPECT().Hash(gomock.Any()).Return("hashed", nil)
		d.accounts.EXPECT().FindOrCreateByTarget(gomock.Any(), gomock.Any(), "hashed").Return(user, nil)
		d.sessions.EXPECT().Start(gomock.Any(), user.ID).Return(tokens, nil)
		if _, err := svc.Login(context.Background(), "alice@example.com", "", "o1234-56789"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("phone_login", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		target := domain.CodeTarget{Channel: "phone", Address: "+4915112345678"}
		d.codes.EXPECT().Check(gomock.Any(), "phone:+4915112345678", testCodeKeys.Hash("phone:+4915112345678", "999999")).Return(nil)
		d.hasher.EXPECT().Hash(gomock.Any()).Return("hashed", nil)
		d.accounts.EXPECT().FindOrCreateByTarget(gomock.Any(), target, "hashed").Return(user, nil)
		d.sessions.EXPECT().Start(gomock.Any(), user.ID).Return(tokens, nil)
		if _, err := svc.Login(context.Background(), "", "+49 151 12345678", "999999"); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name, email, phone, code, field string
	}{
		{"short_code", "a@example.com", "", "12345", "code"},
		{"letters_in_code", "a@example.com", "", "12a456", "code"},
		{"no_target", "", "", "123456", "body"},
		{"bad_email", "nope", "", "123456", "email"},
	} {
		t.Run("invalid/"+tc.name, func(t *testing.T) {
			t.Parallel()
			svc, _ := newCodeLoginService(t) // nothing may be called
			_, err := svc.Login(context.Background(), tc.email, tc.phone, tc.code)
			var verr *domain.ValidationError
			if !errors.As(err, &verr) || len(verr.Fields[tc.field]) == 0 {
				t.Fatalf("error = %v, want a validation error on %q", err, tc.field)
			}
		})
	}
	for _, reason := range []domain.CodeReason{domain.CodeInvalid, domain.CodeLocked} {
		t.Run("refused/"+string(reason), func(t *testing.T) {
			t.Parallel()
			svc, d := newCodeLoginService(t)
			d.codes.EXPECT().Check(gomock.Any(), gomock.Any(), gomock.Any()).Return(&domain.CodeError{Reason: reason})
			_, err := svc.Login(context.Background(), "a@example.com", "", "123456")
			var ce *domain.CodeError
			if !errors.As(err, &ce) || ce.Reason != reason {
				t.Fatalf("error = %v, want code error %s (and no account touched)", err, reason)
			}
		})
	}
	t.Run("account_failure_starts_no_session", func(t *testing.T) {
		t.Parallel()
		svc, d := newCodeLoginService(t)
		down := errors.New("pg down")
		d.codes.EXPECT().Check(gomock.Any(), gomock.Any(), gomock.Any()).Return(nil)
		d.hasher.EXPECT().Hash(gomock.Any()).Return("hashed", nil)
		d.accounts.EXPECT().FindOrCreateByTarget(gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.User{}, down)
		if _, err := svc.Login(context.Background(), "a@example.com", "", "123456"); !errors.Is(err, down) {
			t.Fatalf("error = %v", err)
		}
	})
}

// ---- concurrent first logins against the real accounts ----------------------------------------

// acceptingCodes passes every code: the race under test is the account creation behind it.
type acceptingCodes struct{}

func (acceptingCodes) Put(context.Context, string, string, string, bool) error { return nil }
func (acceptingCodes) Check(context.Context, string, string) error             { return nil }
func (acceptingCodes) Withdraw(context.Context, string, string, string) error  { return nil }

type plainHasher struct{}

func (plainHasher) Hash(p string) (string, error) { return "plain:" + p, nil }
func (plainHasher) Verify(p, enc string) (bool, bool, error) {
	return enc == "plain:"+p, false, nil
}

// userSessions starts a "session" that names its user.
type userSessions struct{}

func (userSessions) Start(_ context.Context, userID int64) (domain.Tokens, error) {
	return domain.Tokens{Access: fmt.Sprintf("access-%d", userID), Refresh: fmt.Sprintf("refresh-%d", userID)}, nil
}
func (u userSessions) StartIn(ctx context.Context, _ service.Tx, userID int64) (domain.Tokens, error) {
	return u.Start(ctx, userID)
}
func (userSessions) Authenticate(context.Context, string) (domain.Credential, error) {
	return domain.Credential{}, domain.ErrUnauthorized
}
func (userSessions) RevokeAllIn(context.Context, service.Tx, int64, string, bool) error { return nil }

// TestCodeLogin_ConcurrentFirstLogins: twenty first logins racing for one new email (or phone),
// written in different ways, create exactly one account and all log into it.
func TestCodeLogin_ConcurrentFirstLogins(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	rds := testenv.NewRedis(t)
	log := testenv.Logger(t)
	users := repository.NewUserRepository(db.Pool, repository.NewQuerier(),
		cache.NewUserCache(rds.Client, cache.Keyspace(rds.Prefix), cache.Policy{TTL: time.Minute, NullTTL: time.Second, LoadTimeout: 10 * time.Second}, log), log, nil)
	svc := service.NewCodeLoginService(acceptingCodes{}, nil, users, plainHasher{}, userSessions{}, noClaims{}, testCodeKeys, log, time.Now)

	for _, tc := range []struct {
		name    string
		spell   func(i int) (email, phone string)
		column  string
		address string
	}{
		{
			name: "email",
			spell: func(i int) (string, string) {
				return []string{"racer@example.com", " Racer@Example.com", "RACER@EXAMPLE.COM "}[i%3], ""
			},
			column: "email_canonical", address: "racer@example.com",
		},
		{
			name: "phone",
			spell: func(i int) (string, string) {
				return "", []string{"+4915199887766", "+49 151 99887766", "+49 1519 9887 766"}[i%3]
			},
			column: "phone", address: "+4915199887766",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n = 20
			ids := make([]int64, n)
			errs := make([]error, n)
			var ready, done sync.WaitGroup
			start := make(chan struct{})
			ready.Add(n)
			for i := range n {
				done.Go(func() {
					email, phone := tc.spell(i)
					ready.Done()
					<-start
					s, err := svc.Login(context.Background(), email, phone, "123456")
					ids[i], errs[i] = s.User.ID, err
					if err == nil && s.Token != fmt.Sprintf("access-%d", s.User.ID) {
						errs[i] = fmt.Errorf("session %+v is not the user's", s)
					}
				})
			}
			ready.Wait()
			close(start)
			done.Wait()
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("login %d: %v", i, errs[i])
				}
				if ids[i] != ids[0] {
					t.Fatalf("logins landed in different accounts: %v", ids)
				}
			}
			var count int64
			if err := db.Pool.QueryRow(context.Background(),
				"SELECT count(*) FROM users WHERE "+tc.column+" = $1", tc.address).Scan(&count); err != nil {
				t.Fatal(err)
			}
			if count != 1 {
				t.Fatalf("%d accounts for %s, want 1", count, tc.address)
			}
			var email string
			if err := db.Pool.QueryRow(context.Background(), "SELECT email FROM users WHERE id = $1", ids[0]).Scan(&email); err != nil {
				t.Fatal(err)
			}
			if tc.column == "phone" && !strings.HasSuffix(email, "@phone.invalid") {
				t.Fatalf("phone account's email %q, want one under .invalid", email)
			}
		})
	}
}

// noClaims takes over nothing.
type noClaims struct{}

func (noClaims) ClaimByCodeLogin(context.Context, string, domain.User, string) error { return nil }
