package domain

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// CodeReason says why a one-time code step was refused.
type CodeReason string

// Reasons a one-time code step is refused.
const (
	CodeTooSoon CodeReason = "too-soon" // a code was sent less than the resend interval ago
	CodeSendCap CodeReason = "send-cap" // the target's daily send cap is used up
	CodeBusy    CodeReason = "busy"     // the global send rate cap is used up
	CodeLocked  CodeReason = "locked"   // the target's failure budget is used up (six-digit codes only)
	// CodeInvalid is every refused guess: wrong, never sent, expired, spent or burned. One reason
	// and one message for all of them, so a guess learns nothing but "no".
	CodeInvalid CodeReason = "invalid"
)

// CodeError is a refused one-time code step, with what the client needs to react. RetryAfter
// is set for the refusals that pass with time (answered 429 with Retry-After).
type CodeError struct {
	Reason     CodeReason
	RetryAfter time.Duration
}

func (e *CodeError) Error() string { return "login code: " + string(e.Reason) }

// Message is the client-facing explanation.
func (e *CodeError) Message() string {
	switch e.Reason {
	case CodeTooSoon:
		return fmt.Sprintf("was sent less than %d seconds ago; wait before asking again", int(e.RetryAfter.Seconds()))
	case CodeSendCap:
		return "was sent too many times to this address from here today; try again later"
	case CodeBusy:
		return "cannot be sent right now; try again shortly"
	case CodeLocked:
		return "was entered wrong too many times for this address; ask for a new code: the next one is longer and works"
	default:
		return "is invalid or has expired"
	}
}

// CodeTarget is where a one-time code goes: an email address or a phone number.
type CodeTarget struct {
	Channel string // "email" or "phone"
	Address string // as typed (trimmed) for email, normalized for phone: where the code is sent
}

// Key identifies the target in storage, given the address's canonical form (the canonical email,
// see service.CanonicalEmail, or the phone number), so look-alike spellings of one address share
// one code, one budget and one account.
func (t CodeTarget) Key(canonical string) string { return t.Channel + ":" + canonical }

var phonePattern = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

// ParseCodeTarget accepts exactly one of an email or an E.164 phone number ("+4915112345678").
func ParseCodeTarget(email, phone string) (CodeTarget, error) {
	email, phone = NormalizeEmail(email), strings.ReplaceAll(strings.TrimSpace(phone), " ", "")
	switch {
	case email != "" && phone != "":
		return CodeTarget{}, NewValidationError("body", "send either email or phone, not both")
	case email != "":
		v := &ValidationError{}
		ValidateEmail(v, email)
		if err := v.OrNil(); err != nil {
			return CodeTarget{}, err
		}
		return CodeTarget{Channel: "email", Address: email}, nil
	case phone != "":
		if !phonePattern.MatchString(phone) {
			return CodeTarget{}, NewValidationError("phone", "must be in international format, e.g. +4915112345678")
		}
		return CodeTarget{Channel: "phone", Address: phone}, nil
	default:
		return CodeTarget{}, NewValidationError("body", "send an email or a phone number")
	}
}

// ValidateCode checks the shape of a submitted six-digit code.
func ValidateCode(code string) error {
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return NewValidationError("code", "must be the 6 digits you received")
	}
	return nil
}

// CanonicalOneTimeCode is the form a submitted one-time code is hashed in: six digits as they are,
// or a strong code (XXXXX-XXXXX, sent while the target's failure budget is used up) in
// CanonicalAccountCode's form. Anything else is a validation error.
func CanonicalOneTimeCode(code string) (string, error) {
	code = strings.TrimSpace(code)
	if ValidateCode(code) == nil {
		return code, nil
	}
	if c, ok := CanonicalAccountCode(code); ok {
		return c, nil
	}
	return "", NewValidationError("code", "must be the 6 digits you received (or the XXXXX-XXXXX code, if that is what you received)")
}

// PhoneOfPlaceholder returns the phone number of a phone account's placeholder email
// ("<digits>@phone.invalid", or "<digits>.<random>@phone.invalid" when the first was taken).
func PhoneOfPlaceholder(email string) (string, bool) {
	local, ok := strings.CutSuffix(email, "@phone.invalid")
	if !ok {
		return "", false
	}
	digits, _, _ := strings.Cut(local, ".")
	return "+" + digits, digits != ""
}
