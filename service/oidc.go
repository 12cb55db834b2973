package service

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=oidc.go -destination=mocks/oidc_mock.go -package=mocks

// SignInStore keeps sign-ins under way and exchange codes, as hashes; each Take consumes what it
// finds, once on the whole fleet. An unknown, spent, expired (or, for a state, another browser's)
// one is domain.ErrNotFound.
type SignInStore interface {
	PutState(ctx context.Context, st domain.SignInState) error
	TakeState(ctx context.Context, stateHash, cookieHash []byte, now time.Time) (domain.SignInState, error)
	PutCode(ctx context.Context, codeHash []byte, userID int64, now, expires time.Time) error
	TakeCode(ctx context.Context, codeHash []byte, now time.Time) (int64, error)
}

// IdentityStore keeps the identities linked to accounts.
type IdentityStore interface {
	// FindBySubject returns the identity (provider, subject), or domain.ErrNotFound.
	FindBySubject(ctx context.Context, provider, subject string) (domain.UserIdentity, error)
	Touch(ctx context.Context, id int64, now time.Time) error
	// LinkIn links in the caller's unit of work; Link in one of its own. An identity another
	// account holds is domain.ErrIdentityInUse.
	LinkIn(ctx context.Context, tx Tx, ident domain.UserIdentity) (domain.UserIdentity, error)
	Link(ctx context.Context, ident domain.UserIdentity) (domain.UserIdentity, error)
	// MarkProviderAccountIn records that a provider made userID with the password hash
	// placeholderHash, and marks its email verified when emailVerified.
	MarkProviderAccountIn(ctx context.Context, tx Tx, userID int64, placeholderHash string, emailVerified bool, now time.Time) error
	List(ctx context.Context, userID int64) ([]domain.UserIdentity, error)
	// Unlink deletes the user's identity, or returns domain.ErrLastSignInWay when it is the
	// account's only way left to sign in, domain.ErrNotFound when the user has no such identity.
	Unlink(ctx context.Context, userID, id int64) error
}

// SignInMail queues an account's mail in a unit of work (durable.JobQueue.EnqueueIn).
type SignInMail interface {
	EnqueueIn(ctx context.Context, tx Tx, j domain.NewJob) (bool, error)
}

// AccountStepUp checks the step-up a credential change asks of a signed-in user (the current
// password, or a code sent to the account's own address): UserService.VerifyStepUp.
type AccountStepUp interface {
	VerifyStepUp(ctx context.Context, userID int64, password, code string) error
}

// SignInConfig is the sign-in flow's settings.
type SignInConfig struct {
	// PublicURL is the API's public base URL; a provider's callback is
	// {PublicURL}/api/auth/oidc/{name}/callback.
	PublicURL string
	// RedirectAllow are the front-end origins (scheme://host[:port]) a sign-in may return to.
	RedirectAllow []string
}

// ProviderInfo is a configured provider as GET /api/auth/providers lists it.
type ProviderInfo struct {
	Name, DisplayName string
	Available         bool
}

// SignInStart is where a sign-in sends the browser, and the cookie that binds it to the browser.
type SignInStart struct {
	AuthorizationURL string
	Cookie           string
}

// SignInService signs people in with accounts they have at an identity provider (issue #30):
// start, callback, the one-time code's exchange for an ordinary session, and the identities of
// an account.
type SignInService struct {
	providers IdentityProviders
	store     SignInStore
	ids       IdentityStore
	users     UserRepository
	uow       UnitOfWork
	hasher    PasswordHasher
	sessions  SessionManager
	verifier  RegistrationVerifier
	mail      SignInMail
	stepUp    AccountStepUp
	cfg       SignInConfig
	log       *slog.Logger
	now       func() time.Time
}

// NewSignInService returns the service.
func NewSignInService(providers IdentityProviders, store SignInStore, ids IdentityStore, users UserRepository, uow UnitOfWork,
	hasher PasswordHasher, sessions SessionManager, verifier RegistrationVerifier, mail SignInMail, stepUp AccountStepUp,
	cfg SignInConfig, log *slog.Logger, now func() time.Time) *SignInService {
	return &SignInService{providers: providers, store: store, ids: ids, users: users, uow: uow, hasher: hasher, sessions: sessions,
		verifier: verifier, mail: mail, stepUp: stepUp, cfg: cfg, log: log, now: now}
}

// Providers lists the configured providers in their configured order.
func (s *SignInService) Providers() []ProviderInfo {
	list := s.providers.List()
	out := make([]ProviderInfo, 0, len(list))
	for _, p := range list {
		out = append(out, ProviderInfo{Name: p.Name(), DisplayName: p.DisplayName(), Available: p.Available()})
	}
	return out
}

// Start begins a sign-in through provider that returns to redirect (an allowed front-end URL);
// linkUserID non-zero makes it a link of that signed-in account (see StartLink). The state and
// the cookie are random; only their hashes are stored, and the PKCE verifier and the nonce are
// derived from both (derive), so they are never stored at all.
func (s *SignInService) Start(ctx context.Context, provider, redirect string, linkUserID int64) (SignInStart, error) {
	p, ok := s.providers.Get(provider)
	if !ok {
		return SignInStart{}, domain.ErrUnknownProvider
	}
	if err := s.allowedRedirect(redirect); err != nil {
		return SignInStart{}, err
	}
	if !p.Available() {
		return SignInStart{}, domain.ErrProviderUnavailable
	}
	state, cookie := randomToken(), randomToken()
	verifier, nonce := derive(state, cookie)
	authURL, err := p.AuthCodeURL(state, nonce, verifier, s.callbackURL(provider))
	if err != nil {
		return SignInStart{}, err
	}
	now := s.now()
	st := domain.SignInState{StateHash: sha(state), CookieHash: sha(cookie), Provider: provider, Redirect: redirect,
		LinkUserID: linkUserID, CreatedAt: now, ExpiresAt: now.Add(domain.SignInStateTTL)}
	if err := s.store.PutState(ctx, st); err != nil {
		return SignInStart{}, err
	}
	return SignInStart{AuthorizationURL: authURL, Cookie: cookie}, nil
}

// StartLink begins linking provider to the signed-in account cred: the step-up of a credential
// change first (the current password, or a code sent to the account's own address). An API key
// never links.
func (s *SignInService) StartLink(ctx context.Context, cred domain.Credential, provider, redirect, password, code string) (SignInStart, error) {
	if cred.IsAPIKey() {
		return SignInStart{}, domain.ErrForbidden
	}
	if _, ok := s.providers.Get(provider); !ok {
		return SignInStart{}, domain.ErrUnknownProvider
	}
	if err := s.allowedRedirect(redirect); err != nil {
		return SignInStart{}, err
	}
	if err := s.stepUp.VerifyStepUp(ctx, cred.UserID, password, code); err != nil {
		return SignInStart{}, err
	}
	return s.Start(ctx, provider, redirect, cred.UserID)
}

// Callback finishes a sign-in at provider's callback. A state that is not a live one of this
// browser is domain.ErrBadSignInState (nothing to redirect to). Once the state is valid, Callback
// returns the URL to redirect to and no error: the front end's URL with ?code= (a one-time code
// for Exchange), ?linked= (a link), or ?error= (a SignInFailure code).
func (s *SignInService) Callback(ctx context.Context, provider, state, cookie, code, errParam string) (string, error) {
	if state == "" || cookie == "" || len(state) > 256 || len(cookie) > 256 {
		return "", domain.ErrBadSignInState
	}
	st, err := s.store.TakeState(ctx, sha(state), sha(cookie), s.now())
	if errors.Is(err, domain.ErrNotFound) || (err == nil && st.Provider != provider) {
		return "", domain.ErrBadSignInState
	}
	if err != nil {
		return "", err
	}
	fail := func(code string, err error) (string, error) {
		s.log.InfoContext(ctx, "sign-in through a provider failed", "provider", provider, "code", code, "err", err)
		return withQuery(st.Redirect, "error", code), nil
	}
	if errParam != "" {
		return fail(domain.SignInProviderError, fmt.Errorf("the provider answered error=%q", errParam))
	}
	p, ok := s.providers.Get(provider)
	if !ok {
		return fail(domain.SignInProviderUnavailable, domain.ErrUnknownProvider)
	}
	if code == "" {
		return fail(domain.SignInExchangeFailed, errors.New("no code"))
	}
	verifier, nonce := derive(state, cookie)
	ident, err := p.Exchange(ctx, code, verifier, s.callbackURL(provider), nonce)
	if err != nil {
		if c := domain.SignInFailureCode(err); c != "" {
			return fail(c, err)
		}
		return fail(domain.SignInProviderUnavailable, err)
	}
	ident.Provider = provider
	if st.LinkUserID != 0 {
		if err := s.link(ctx, st.LinkUserID, ident); err != nil {
			return fail(failureCode(err), err)
		}
		return withQuery(st.Redirect, "linked", provider), nil
	}
	userID, err := s.resolve(ctx, p, ident)
	if err != nil {
		return fail(failureCode(err), err)
	}
	one := randomToken()
	now := s.now()
	if err := s.store.PutCode(ctx, sha(one), userID, now, now.Add(domain.SignInCodeTTL)); err != nil {
		return fail(domain.SignInUnavailable, err)
	}
	return withQuery(st.Redirect, "code", one), nil
}

// Exchange trades a callback's one-time code for an ordinary session: listed, revocable,
// refreshed by rotation. A spent, unknown or expired code is domain.ErrAccountCodeInvalid.
func (s *SignInService) Exchange(ctx context.Context, code string) (Session, error) {
	if code == "" || len(code) > 256 {
		return Session{}, domain.ErrAccountCodeInvalid
	}
	userID, err := s.store.TakeCode(ctx, sha(code), s.now())
	if errors.Is(err, domain.ErrNotFound) {
		return Session{}, domain.ErrAccountCodeInvalid
	}
	if err != nil {
		return Session{}, err
	}
	u, err := s.users.GetByID(ctx, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return Session{}, domain.ErrAccountCodeInvalid // deleted meanwhile
	}
	if err != nil {
		return Session{}, err
	}
	if err := refuseSuspended(u, s.now()); err != nil {
		return Session{}, err
	}
	t, err := s.sessions.Start(ctx, u.ID)
	if err != nil {
		return Session{}, fmt.Errorf("start session for user %d: %w", u.ID, err)
	}
	return Session{User: u, Token: t.Access, Refresh: t.Refresh}, nil
}

// Identities lists the user's linked identities.
func (s *SignInService) Identities(ctx context.Context, userID int64) ([]domain.UserIdentity, error) {
	return s.ids.List(ctx, userID)
}

// Unlink removes one of the user's identities, unless it is the only way left to sign in (422).
func (s *SignInService) Unlink(ctx context.Context, userID, id int64) error {
	err := s.ids.Unlink(ctx, userID, id)
	if errors.Is(err, domain.ErrLastSignInWay) {
		return domain.NewValidationError("identity", "is the only way left to sign in: set a password or link another provider first")
	}
	return err
}

// allowedRedirect refuses a redirect that is not an absolute http(s) URL under an allowed origin:
// no open redirect.
func (s *SignInService) allowedRedirect(redirect string) error {
	refuse := domain.NewValidationError("redirect", "must be a URL under an allowed front-end origin (INKWELL_OIDC_REDIRECT_ALLOW)")
	u, err := url.Parse(redirect)
	if redirect == "" || len(redirect) > 2048 || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return refuse
	}
	origin := strings.ToLower(u.Scheme + "://" + u.Host)
	for _, allowed := range s.cfg.RedirectAllow {
		if origin == strings.ToLower(strings.TrimRight(allowed, "/")) {
			return nil
		}
	}
	return refuse
}

func (s *SignInService) callbackURL(provider string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/api/auth/oidc/" + url.PathEscape(provider) + "/callback"
}

// derive is the PKCE verifier and the nonce of a sign-in: HMAC-SHA256 keyed with the browser's
// cookie over the state. Whoever holds the state alone (it travels through the provider) cannot
// compute either; the callback, holding both, recomputes them, so neither is stored.
func derive(state, cookie string) (verifier, nonce string) {
	mac := func(label string) string {
		m := hmac.New(sha256.New, []byte(cookie))
		m.Write([]byte(label + "\x00" + state))
		return base64.RawURLEncoding.EncodeToString(m.Sum(nil)) // 43 characters: a valid PKCE verifier
	}
	return mac("pkce"), mac("nonce")
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

func sha(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// withQuery adds key=value to the front end's URL (which may have a query of its own).
func withQuery(redirect, key, value string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return redirect // stored after allowedRedirect parsed it: cannot happen
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// failureCode is the SignInFailure code of a sign-in's error: its own, a suspension, or
// temporarily_unavailable for a failure of inkwell's own storage.
func failureCode(err error) string {
	var serr *domain.SuspendedError
	switch {
	case domain.SignInFailureCode(err) != "":
		return domain.SignInFailureCode(err)
	case errors.As(err, &serr):
		return domain.SignInSuspended
	case errors.Is(err, domain.ErrIdentityInUse):
		return domain.SignInIdentityInUse
	}
	return domain.SignInUnavailable
}

func signInFailure(code string, err error) error { return &domain.SignInFailure{Code: code, Err: err} }

// identityLinkedMail is the notice job for u: a provider's identity was linked by its email.
func identityLinkedMail(u domain.User, provider string) (domain.NewJob, error) {
	payload, err := json.Marshal(AccountMailPayload{Purpose: string(domain.PurposeIdentityLinked), Address: u.Email, Provider: provider})
	if err != nil {
		return domain.NewJob{}, err
	}
	return domain.NewJob{Queue: QueueDefault, Kind: JobKindSendAccountMail, Payload: payload, MaxAttempts: 5, DeleteWhenDone: true}, nil
}
