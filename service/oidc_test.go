package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

var signInNow = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// oneProvider is IdentityProviders with one provider, "corp".
type oneProvider struct{ p service.IdentityProvider }

func (o oneProvider) List() []service.IdentityProvider { return []service.IdentityProvider{o.p} }
func (o oneProvider) Get(name string) (service.IdentityProvider, bool) {
	return o.p, name == "corp"
}

type signInMocks struct {
	provider *mocks.MockIdentityProvider
	store    *mocks.MockSignInStore
	ids      *mocks.MockIdentityStore
	users    *mocks.MockUserRepository
	hasher   *mocks.MockPasswordHasher
	sessions *mocks.MockSessionManager
	verifier *mocks.MockRegistrationVerifier
	mail     *mocks.MockSignInMail
	stepUp   *mocks.MockAccountStepUp
	svc      *service.SignInService
}

func newSignIn(t *testing.T) signInMocks {
	ctrl := gomock.NewController(t)
	m := signInMocks{provider: mocks.NewMockIdentityProvider(ctrl), store: mocks.NewMockSignInStore(ctrl), ids: mocks.NewMockIdentityStore(ctrl),
		users: mocks.NewMockUserRepository(ctrl), hasher: mocks.NewMockPasswordHasher(ctrl), sessions: mocks.NewMockSessionManager(ctrl),
		verifier: mocks.NewMockRegistrationVerifier(ctrl), mail: mocks.NewMockSignInMail(ctrl), stepUp: mocks.NewMockAccountStepUp(ctrl)}
	m.provider.EXPECT().Name().Return("corp").AnyTimes()
	m.provider.EXPECT().DisplayName().Return("Corp SSO").AnyTimes()
	cfg := service.SignInConfig{PublicURL: "https://api.example.com/", RedirectAllow: []string{"https://app.example.com"}}
	m.svc = service.NewSignInService(oneProvider{m.provider}, m.store, m.ids, m.users, txUnitOfWork{}, m.hasher, m.sessions, m.verifier,
		m.mail, m.stepUp, cfg, discardLogger, func() time.Time { return signInNow })
	return m
}

const callbackURL = "https://api.example.com/api/auth/oidc/corp/callback"

func TestSignIn_StartRefusesBeforeStoring(t *testing.T) {
	for _, c := range []struct {
		name, provider, redirect string
		available                bool
		want                     error
	}{
		{"unknown provider", "nope", "https://app.example.com/cb", true, domain.ErrUnknownProvider},
		{"another origin", "corp", "https://evil.example/cb", true, nil},
		{"a look-alike host", "corp", "https://app.example.com.evil.example/cb", true, nil},
		{"userinfo", "corp", "https://app.example.com@evil.example/cb", true, nil},
		{"scheme-relative", "corp", "//app.example.com/cb", true, nil},
		{"javascript", "corp", "javascript:alert(1)", true, nil},
		{"empty", "corp", "", true, nil},
		{"unavailable", "corp", "https://app.example.com/cb", false, domain.ErrProviderUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newSignIn(t)
			m.provider.EXPECT().Available().Return(c.available).AnyTimes()
			m.provider.EXPECT().AuthCodeURL(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			m.store.EXPECT().PutState(gomock.Any(), gomock.Any()).Times(0)
			_, err := m.svc.Start(context.Background(), c.provider, c.redirect, 0)
			if c.want != nil {
				requireErrorIs(t, err, c.want)
				return
			}
			requireValidation(t, err, map[string][]string{"redirect": {"must be a URL under an allowed front-end origin (INKWELL_OIDC_REDIRECT_ALLOW)"}})
		})
	}
}

// TestSignIn_StartAndCallbackAgree: the state and cookie are stored as hashes only; the callback,
// holding both, derives the verifier and nonce the start gave the provider.
func TestSignIn_StartAndCallbackAgree(t *testing.T) {
	m := newSignIn(t)
	m.provider.EXPECT().Available().Return(true)
	var state, verifier, nonce string
	m.provider.EXPECT().AuthCodeURL(gomock.Any(), gomock.Any(), gomock.Any(), callbackURL).DoAndReturn(func(s, n, v, _ string) (string, error) {
		state, nonce, verifier = s, n, v
		return "https://idp.example/auth?state=" + s, nil
	})
	var stored domain.SignInState
	m.store.EXPECT().PutState(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, st domain.SignInState) error {
		stored = st
		return nil
	})
	start, err := m.svc.Start(context.Background(), "corp", "https://app.example.com/cb?x=1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(verifier) < 43 || nonce == "" || nonce == verifier || state == start.Cookie {
		t.Fatalf("verifier %q nonce %q", verifier, nonce)
	}
	if len(stored.StateHash) != 32 || len(stored.CookieHash) != 32 || bytes.Contains(stored.StateHash, []byte(state)) ||
		!stored.ExpiresAt.Equal(signInNow.Add(10*time.Minute)) || stored.Provider != "corp" {
		t.Fatalf("stored %+v", stored)
	}

	m.store.EXPECT().TakeState(gomock.Any(), stored.StateHash, stored.CookieHash, signInNow).Return(stored, nil)
	m.provider.EXPECT().Exchange(gomock.Any(), "idp-code", verifier, callbackURL, nonce).
		Return(domain.ExternalIdentity{Provider: "corp", Subject: "s1"}, nil)
	m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{ID: 4, UserID: 9}, nil)
	m.users.EXPECT().GetByID(gomock.Any(), int64(9)).Return(domain.User{ID: 9}, nil)
	m.ids.EXPECT().Touch(gomock.Any(), int64(4), signInNow)
	var codeHash []byte
	m.store.EXPECT().PutCode(gomock.Any(), gomock.Any(), int64(9), signInNow, signInNow.Add(time.Minute)).
		DoAndReturn(func(_ context.Context, h []byte, _ int64, _, _ time.Time) error { codeHash = h; return nil })
	to, err := m.svc.Callback(context.Background(), "corp", state, start.Cookie, "idp-code", "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(to)
	code := u.Query().Get("code")
	if u.Host != "app.example.com" || u.Query().Get("x") != "1" || code == "" || len(codeHash) != 32 || bytes.Contains(codeHash, []byte(code)) {
		t.Fatalf("redirect %s, code hash %x", to, codeHash)
	}
}

func TestSignIn_CallbackBadStateIs400(t *testing.T) {
	for _, c := range []struct {
		name, provider, state, cookie string
		take                          bool
		found                         error
	}{
		{"no state", "corp", "", "c", false, nil},
		{"no cookie", "corp", "s", "", false, nil},
		{"unknown, spent, expired or another browser's", "corp", "s", "c", true, domain.ErrNotFound},
		{"another provider's state", "other", "s", "c", true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newSignIn(t)
			if c.take {
				m.store.EXPECT().TakeState(gomock.Any(), gomock.Any(), gomock.Any(), signInNow).Return(domain.SignInState{Provider: "corp"}, c.found)
			} else {
				m.store.EXPECT().TakeState(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			}
			m.provider.EXPECT().Exchange(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			_, err := m.svc.Callback(context.Background(), c.provider, c.state, c.cookie, "code", "")
			requireErrorIs(t, err, domain.ErrBadSignInState)
		})
	}
}

var validState = domain.SignInState{Provider: "corp", Redirect: "https://app.example.com/cb"}

// TestSignIn_CallbackRules: once the state is valid, each outcome is a redirect to the front end.
func TestSignIn_CallbackRules(t *testing.T) {
	verified := domain.ExternalIdentity{Provider: "corp", Subject: "s1", Email: "ada@example.com", EmailVerified: true, Username: "ada"}
	unverified := verified
	unverified.EmailVerified = false
	suspended := domain.User{ID: 9, Suspension: domain.Suspension{Until: signInNow.Add(time.Hour)}}
	for _, c := range []struct {
		name     string
		errParam string
		ident    domain.ExternalIdentity
		exchange error
		stubs    func(m signInMocks)
		want     string // the front end's query: "code" or "error=..."
	}{
		{name: "the provider's error", errParam: "access_denied", want: "error=provider_error"},
		{name: "exchange refused", exchange: &domain.SignInFailure{Code: domain.SignInExchangeFailed}, want: "error=exchange_failed"},
		{name: "invalid token", exchange: &domain.SignInFailure{Code: domain.SignInInvalidToken}, want: "error=invalid_token"},
		{name: "nonce mismatch", exchange: &domain.SignInFailure{Code: domain.SignInNonceMismatch}, want: "error=nonce_mismatch"},
		{name: "provider down", exchange: errors.New("dial tcp: refused"), want: "error=provider_unavailable"},
		{name: "suspended known account", ident: verified, want: "error=account_suspended", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{ID: 4, UserID: 9}, nil)
			m.users.EXPECT().GetByID(gomock.Any(), int64(9)).Return(suspended, nil)
		}},
		{name: "link by verified email, with the notice", ident: verified, want: "code", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
			m.users.EXPECT().GetByEmail(gomock.Any(), "ada@example.com").Return(domain.User{ID: 9, Email: "Ada@example.com", EmailVerified: true}, nil)
			m.ids.EXPECT().LinkIn(gomock.Any(), gomock.Any(), domain.UserIdentity{UserID: 9, Provider: "corp", Subject: "s1", Email: "ada@example.com"})
			m.mail.EXPECT().EnqueueIn(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, _ service.Tx, j domain.NewJob) (bool, error) {
				var p service.AccountMailPayload
				_ = json.Unmarshal(j.Payload, &p)
				if j.Kind != service.JobKindSendAccountMail || p.Purpose != "identity_linked" || p.Address != "Ada@example.com" || p.Provider != "Corp SSO" {
					t.Errorf("notice job %s %+v", j.Kind, p)
				}
				return true, nil
			})
			m.store.EXPECT().PutCode(gomock.Any(), gomock.Any(), int64(9), gomock.Any(), gomock.Any())
		}},
		{name: "an email the provider did not verify never links", ident: unverified, want: "error=email_in_use", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
			m.users.EXPECT().GetByEmail(gomock.Any(), "ada@example.com").Return(domain.User{ID: 9, EmailVerified: true}, nil)
			m.ids.EXPECT().LinkIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		}},
		{name: "an account's unverified email never links", ident: verified, want: "error=email_in_use", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
			m.users.EXPECT().GetByEmail(gomock.Any(), "ada@example.com").Return(domain.User{ID: 9, EmailVerified: false}, nil)
			m.ids.EXPECT().LinkIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		}},
		{name: "no email", ident: domain.ExternalIdentity{Provider: "corp", Subject: "s1"}, want: "error=email_required", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
		}},
		{name: "new account, username taken once", ident: verified, want: "code", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
			m.users.EXPECT().GetByEmail(gomock.Any(), "ada@example.com").Return(domain.User{}, domain.ErrNotFound)
			m.hasher.EXPECT().Hash(gomock.Any()).Return("placeholder", nil)
			gomock.InOrder(
				m.users.EXPECT().CreateIn(gomock.Any(), gomock.Any(), domain.User{Email: "ada@example.com", Username: "ada", PasswordHash: "placeholder"}).
					Return(domain.User{}, domain.ErrUsernameTaken),
				m.users.EXPECT().CreateIn(gomock.Any(), gomock.Any(), domain.User{Email: "ada@example.com", Username: "ada2", PasswordHash: "placeholder"}).
					Return(domain.User{ID: 10, Email: "ada@example.com", Username: "ada2"}, nil),
			)
			m.ids.EXPECT().MarkProviderAccountIn(gomock.Any(), gomock.Any(), int64(10), "placeholder", true, signInNow)
			m.ids.EXPECT().LinkIn(gomock.Any(), gomock.Any(), domain.UserIdentity{UserID: 10, Provider: "corp", Subject: "s1", Email: "ada@example.com"})
			m.verifier.EXPECT().IssueVerificationIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0) // the provider verified it
			m.store.EXPECT().PutCode(gomock.Any(), gomock.Any(), int64(10), gomock.Any(), gomock.Any())
		}},
		{name: "new account with an unverified email gets the verification mail", ident: unverified, want: "code", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
			m.users.EXPECT().GetByEmail(gomock.Any(), "ada@example.com").Return(domain.User{}, domain.ErrNotFound)
			m.hasher.EXPECT().Hash(gomock.Any()).Return("placeholder", nil)
			m.users.EXPECT().CreateIn(gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.User{ID: 10, Email: "ada@example.com"}, nil)
			m.ids.EXPECT().MarkProviderAccountIn(gomock.Any(), gomock.Any(), int64(10), "placeholder", false, signInNow)
			m.ids.EXPECT().LinkIn(gomock.Any(), gomock.Any(), gomock.Any())
			m.verifier.EXPECT().IssueVerificationIn(gomock.Any(), gomock.Any(), domain.User{ID: 10, Email: "ada@example.com"})
			m.store.EXPECT().PutCode(gomock.Any(), gomock.Any(), int64(10), gomock.Any(), gomock.Any())
		}},
		{name: "storage down", ident: verified, want: "error=temporarily_unavailable", stubs: func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrUnavailable)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newSignIn(t)
			m.store.EXPECT().TakeState(gomock.Any(), gomock.Any(), gomock.Any(), signInNow).Return(validState, nil)
			if c.errParam != "" {
				m.provider.EXPECT().Exchange(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			} else {
				m.provider.EXPECT().Exchange(gomock.Any(), "idp-code", gomock.Any(), callbackURL, gomock.Any()).Return(c.ident, c.exchange)
			}
			if c.stubs != nil {
				c.stubs(m)
			}
			to, err := m.svc.Callback(context.Background(), "corp", "state", "cookie", "idp-code", c.errParam)
			if err != nil {
				t.Fatalf("callback error %v, want a redirect", err)
			}
			u, _ := url.Parse(to)
			got := "code"
			if e := u.Query().Get("error"); e != "" {
				got = "error=" + e
			} else if u.Query().Get("code") == "" {
				got = u.RawQuery
			}
			if !strings.HasPrefix(to, "https://app.example.com/cb?") || got != c.want {
				t.Fatalf("redirect %s, want %s", to, c.want)
			}
		})
	}
}

func TestSignIn_Link(t *testing.T) {
	ident := domain.ExternalIdentity{Provider: "corp", Subject: "s1", Email: "ada@example.com", EmailVerified: true}
	linking := validState
	linking.LinkUserID = 9
	for _, c := range []struct {
		name  string
		stubs func(m signInMocks)
		want  string
	}{
		{"linked", func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
			m.ids.EXPECT().Link(gomock.Any(), domain.UserIdentity{UserID: 9, Provider: "corp", Subject: "s1", Email: "ada@example.com"})
		}, "linked=corp"},
		{"already this account's", func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{UserID: 9}, nil)
		}, "linked=corp"},
		{"another account's", func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{UserID: 5}, nil)
		}, "error=identity_in_use"},
		{"taken meanwhile", func(m signInMocks) {
			m.ids.EXPECT().FindBySubject(gomock.Any(), "corp", "s1").Return(domain.UserIdentity{}, domain.ErrNotFound)
			m.ids.EXPECT().Link(gomock.Any(), gomock.Any()).Return(domain.UserIdentity{}, domain.ErrIdentityInUse)
		}, "error=identity_in_use"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newSignIn(t)
			m.store.EXPECT().TakeState(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(linking, nil)
			m.provider.EXPECT().Exchange(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(ident, nil)
			m.users.EXPECT().GetByID(gomock.Any(), int64(9)).Return(domain.User{ID: 9}, nil)
			m.store.EXPECT().PutCode(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0) // a link signs nobody in
			c.stubs(m)
			to, err := m.svc.Callback(context.Background(), "corp", "state", "cookie", "idp-code", "")
			if err != nil || !strings.HasSuffix(to, "?"+c.want) {
				t.Fatalf("redirect %s (%v), want ?%s", to, err, c.want)
			}
		})
	}
}

func TestSignIn_StartLinkNeedsTheStepUp(t *testing.T) {
	m := newSignIn(t)
	cred := domain.Credential{UserID: 9, SessionID: "sid"}
	m.stepUp.EXPECT().VerifyStepUp(gomock.Any(), int64(9), "wrong", "").Return(domain.ErrWrongCurrentPassword)
	m.store.EXPECT().PutState(gomock.Any(), gomock.Any()).Times(0)
	_, err := m.svc.StartLink(context.Background(), cred, "corp", "https://app.example.com/cb", "wrong", "")
	requireErrorIs(t, err, domain.ErrWrongCurrentPassword)
	_, err = m.svc.StartLink(context.Background(), domain.Credential{UserID: 9, APIKeyID: 1}, "corp", "https://app.example.com/cb", "pw", "")
	requireErrorIs(t, err, domain.ErrForbidden)

	m.stepUp.EXPECT().VerifyStepUp(gomock.Any(), int64(9), "right", "").Return(nil)
	m.provider.EXPECT().Available().Return(true)
	m.provider.EXPECT().AuthCodeURL(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return("https://idp.example/auth", nil)
	m.store.EXPECT().PutState(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, st domain.SignInState) error {
		if st.LinkUserID != 9 {
			t.Errorf("link user %d", st.LinkUserID)
		}
		return nil
	})
	if _, err := m.svc.StartLink(context.Background(), cred, "corp", "https://app.example.com/cb", "right", ""); err != nil {
		t.Fatal(err)
	}
}

func TestSignIn_Exchange(t *testing.T) {
	m := newSignIn(t)
	m.store.EXPECT().TakeCode(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
	_, err := m.svc.Exchange(context.Background(), "")
	requireErrorIs(t, err, domain.ErrAccountCodeInvalid)

	m.store.EXPECT().TakeCode(gomock.Any(), gomock.Any(), signInNow).Return(int64(0), domain.ErrNotFound)
	_, err = m.svc.Exchange(context.Background(), "spent")
	requireErrorIs(t, err, domain.ErrAccountCodeInvalid)

	m.store.EXPECT().TakeCode(gomock.Any(), gomock.Any(), signInNow).Return(int64(9), nil)
	m.users.EXPECT().GetByID(gomock.Any(), int64(9)).Return(domain.User{ID: 9, Suspension: domain.Suspension{Until: signInNow.Add(time.Hour)}}, nil)
	m.sessions.EXPECT().Start(gomock.Any(), gomock.Any()).Times(0)
	_, err = m.svc.Exchange(context.Background(), "suspended")
	var serr *domain.SuspendedError
	if !errors.As(err, &serr) {
		t.Fatalf("error %v, want a suspension", err)
	}

	m2 := newSignIn(t)
	m2.store.EXPECT().TakeCode(gomock.Any(), gomock.Any(), signInNow).Return(int64(9), nil)
	m2.users.EXPECT().GetByID(gomock.Any(), int64(9)).Return(domain.User{ID: 9, Username: "ada"}, nil)
	m2.sessions.EXPECT().Start(gomock.Any(), int64(9)).Return(domain.Tokens{Access: "a", Refresh: "r"}, nil)
	s, err := m2.svc.Exchange(context.Background(), "good")
	if err != nil || s.Token != "a" || s.Refresh != "r" || s.User.Username != "ada" {
		t.Fatalf("session %+v, %v", s, err)
	}
}

func TestSignIn_UnlinkTheLastWayIs422(t *testing.T) {
	m := newSignIn(t)
	m.ids.EXPECT().Unlink(gomock.Any(), int64(9), int64(4)).Return(domain.ErrLastSignInWay)
	requireValidation(t, m.svc.Unlink(context.Background(), 9, 4),
		map[string][]string{"identity": {"is the only way left to sign in: set a password or link another provider first"}})
}

func TestUsernameFromProfile(t *testing.T) {
	for _, c := range []struct {
		ident domain.ExternalIdentity
		want  string
	}{
		{domain.ExternalIdentity{Username: "ada.l", Name: "Ada", Email: "x@y.z"}, "ada.l"},
		{domain.ExternalIdentity{Name: "Ada Lovelace", Email: "x@y.z"}, "Ada_Lovelace"},
		{domain.ExternalIdentity{Name: "Ådå", Email: "ada+tag@y.z"}, "adatag"},
		{domain.ExternalIdentity{Username: "admin", Email: "root@y.z"}, "user"},
		{domain.ExternalIdentity{Username: "...", Email: "-@y.z"}, "user"},
		{domain.ExternalIdentity{Username: strings.Repeat("a", 60)}, strings.Repeat("a", 34)},
	} {
		if got := service.UsernameFromProfile(c.ident); got != c.want {
			t.Errorf("UsernameFromProfile(%+v) = %q, want %q", c.ident, got, c.want)
		}
		v := &domain.ValidationError{}
		domain.ValidateUsername(v, service.UsernameFromProfile(c.ident)+"99")
		if v.OrNil() != nil {
			t.Errorf("%+v: %v", c.ident, v.Fields)
		}
	}
}
