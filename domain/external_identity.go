package domain

import "errors"

// ExternalIdentity is who an identity provider says signed in: the configured provider's name,
// the provider's stable id for the account and the profile it asserted. Only Provider and Subject
// identify the person; the email is a claim that links accounts only when EmailVerified.
type ExternalIdentity struct {
	Provider      string // the configured name: "google", "corp", "github"
	Subject       string // OIDC "sub", GitHub's numeric user id
	Email         string // as asserted; may be empty
	EmailVerified bool   // the provider asserts it verified Email
	Name          string // a display name, possibly empty
	Username      string // preferred_username or GitHub login: a hint for a new account's username
	Picture       string // an https URL, possibly empty
}

// SignInFailure is why a sign-in through a provider failed after its state was valid. Code is
// what the front end receives in the `error` query parameter of its redirect; the wrapped error
// is for logs only.
type SignInFailure struct {
	Code string
	Err  error
}

func (e *SignInFailure) Error() string {
	if e.Err == nil {
		return "sign-in failed: " + e.Code
	}
	return "sign-in failed: " + e.Code + ": " + e.Err.Error()
}

func (e *SignInFailure) Unwrap() error { return e.Err }

// The codes of SignInFailure.
const (
	SignInProviderError       = "provider_error"       // the provider answered with its own error parameter
	SignInExchangeFailed      = "exchange_failed"      // the code was refused (replayed, expired, wrong verifier)
	SignInInvalidToken        = "invalid_token"        // the ID token failed verification (signature, iss, aud, azp, exp)
	SignInNonceMismatch       = "nonce_mismatch"       // the ID token's nonce is not this sign-in's
	SignInProviderUnavailable = "provider_unavailable" // the provider could not be reached
	SignInNoEmail             = "email_required"       // a new account needs an email the provider did not give
	SignInIdentityInUse       = "identity_in_use"      // linking an identity another account already has
	SignInSuspended           = "account_suspended"    // the account is suspended
)

// ErrUnknownProvider: no sign-in provider of that name is configured.
var ErrUnknownProvider = errors.New("unknown sign-in provider")

// ErrProviderUnavailable: the provider is configured but its discovery has not succeeded yet.
var ErrProviderUnavailable = errors.New("sign-in provider unavailable")

// SignInFailureCode returns err's SignInFailure code, or "" when err is not one.
func SignInFailureCode(err error) string {
	var f *SignInFailure
	if errors.As(err, &f) {
		return f.Code
	}
	return ""
}
