package domain

import (
	"errors"
	"time"
)

// UserIdentity is an account's link to a provider's account: who signs in as this user through
// that provider (issue #30).
type UserIdentity struct {
	ID         int64
	UserID     int64
	Provider   string
	Subject    string
	Email      string // as the provider asserted it when linked; may be empty
	CreatedAt  time.Time
	LastUsedAt time.Time
}

// SignInState is a sign-in under way through a provider, between start and callback. Only the
// hashes of the state and of the browser-binding cookie are kept.
type SignInState struct {
	StateHash  []byte
	CookieHash []byte
	Provider   string
	Redirect   string // the allowed front-end URL the callback returns to
	LinkUserID int64  // non-zero: the identity joins this signed-in account
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// Lifetimes of the sign-in flow's one-time values.
const (
	SignInStateTTL = 10 * time.Minute // from start to callback, the time to sign in at the provider
	SignInCodeTTL  = 60 * time.Second // from the callback's redirect to the front end's exchange
)

// ErrIdentityInUse: the provider's identity is linked to another account already.
var ErrIdentityInUse = errors.New("identity linked to another account")

// ErrRedirectNotAllowed: a sign-in's redirect is not under an allowed front-end origin.
var ErrRedirectNotAllowed = errors.New("redirect not allowed")

// ErrLastSignInWay: unlinking the identity would leave the account no way to sign in (no password
// its owner set, no other identity).
var ErrLastSignInWay = errors.New("the only way left to sign in")

// More SignInFailure codes, for what only the use case can tell.
const (
	// SignInEmailInUse: a new account would take an email another account has, unverified; its
	// owner signs in with their password (or a code), verifies it, then links the provider.
	SignInEmailInUse = "email_in_use"
	// SignInUnavailable: inkwell itself could not finish the sign-in (its storage failed); retry.
	SignInUnavailable = "temporarily_unavailable"
)

// PurposeIdentityLinked is the notice mailed to an account when a provider's identity was linked
// to it by its verified email: no code, only the news (the job carries the provider's name).
const PurposeIdentityLinked AccountCodePurpose = "identity_linked"

// ErrBadSignInState: a callback's state is forged, unknown, expired, already used, or not this
// browser's (its cookie is missing or another's). There is no trusted place to send it back to.
var ErrBadSignInState = errors.New("invalid sign-in state")
