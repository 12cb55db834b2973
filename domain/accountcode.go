package domain

import (
	"crypto/rand"
	"errors"
	"strings"
	"time"
)

// AccountCodePurpose says what a code mailed to an account proves when it comes back.
type AccountCodePurpose string

const (
	PurposeVerifyEmail   AccountCodePurpose = "verify_email"   // the account's email is read by its owner
	PurposeResetPassword AccountCodePurpose = "reset_password" // the same, and a new password may be set
)

// Account code policy: a verification code lives a day (it waits in an inbox), a reset code 15
// minutes; one code per minute per account and purpose; five wrong guesses spend a code.
const (
	VerifyEmailValidity   = 24 * time.Hour
	ResetPasswordValidity = 15 * time.Minute
	AccountCodeResend     = time.Minute
	AccountCodeAttempts   = 5
)

// ErrAccountCodeInvalid is a verification or reset code that is wrong, spent, expired, used up by
// wrong guesses, or for an unknown address: the client is never told which.
var ErrAccountCodeInvalid = errors.New("the code is invalid or has expired")

// accountCodeAlphabet is Crockford's base32: no I, L, O or U, so a code read aloud or copied by
// hand is not mistyped.
const accountCodeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// AccountCodeLen is the length of a code without its separator: 10 symbols, 50 bits, far beyond
// online guessing within a code's five tries, and costly to reverse from its SHA-256 within its
// validity.
const AccountCodeLen = 10

// NewAccountCode returns a random code shown as XXXXX-XXXXX.
func NewAccountCode() string {
	b := make([]byte, AccountCodeLen)
	_, _ = rand.Read(b)
	out := make([]byte, 0, AccountCodeLen+1)
	for i, v := range b {
		if i == AccountCodeLen/2 {
			out = append(out, '-')
		}
		out = append(out, accountCodeAlphabet[int(v)%len(accountCodeAlphabet)]) // 256 is a multiple of 32: no bias
	}
	return string(out)
}

// CanonicalAccountCode is the form a code is hashed in: upper case, without separators or
// spaces, with the letters people confuse with digits read as those digits. ok is false for
// anything that cannot be a code.
func CanonicalAccountCode(code string) (canonical string, ok bool) {
	var b strings.Builder
	for _, r := range strings.ToUpper(code) {
		switch r {
		case '-', ' ':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		if !strings.ContainsRune(accountCodeAlphabet, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	if b.Len() != AccountCodeLen {
		return "", false
	}
	return b.String(), true
}

// HashAccountCode is what is stored for a code: the SHA-256 of its canonical form.
func HashAccountCode(code string) ([]byte, bool) {
	c, ok := CanonicalAccountCode(code)
	if !ok {
		return nil, false
	}
	return HashSecret(c), true
}

// HasMailbox reports whether an account's email can receive mail: accounts made by phone login
// carry a placeholder under the reserved .invalid domain.
func HasMailbox(email string) bool { return !strings.HasSuffix(email, "@phone.invalid") }
