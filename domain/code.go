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
	CodeTooSoon CodeReason = "too-soon" // a code was sent less than a minute ago
	CodeMissing CodeReason = "missing"  // never sent, expired, or already used
	CodeWrong   CodeReason = "wrong"    // wrong code; attempts remain
	CodeBurned  CodeReason = "burned"   // too many wrong attempts
)

// CodeError is a refused one-time code step, with what the client needs to react.
type CodeError struct {
	Reason       CodeReason
	AttemptsLeft int
	RetryAfter   time.Duration
}

func (e *CodeError) Error() string { return "login code: " + string(e.Reason) }

// Message is the client-facing explanation.
func (e *CodeError) Message() string {
	switch e.Reason {
	case CodeTooSoon:
		return fmt.Sprintf("was sent less than %d seconds ago; wait before asking again", int(e.RetryAfter.Seconds()))
	case CodeWrong:
		return fmt.Sprintf("is wrong; %d attempt(s) left", e.AttemptsLeft)
	case CodeBurned:
		return "was tried too many times; request a new code"
	default:
		return "has expired or was never sent; request a new code"
	}
}

// CodeTarget is where a one-time code goes: an email address or a phone number.
type CodeTarget struct {
	Channel string // "email" or "phone"
	Address string // normalized
}

// Key identifies the target in storage.
func (t CodeTarget) Key() string { return t.Channel + ":" + t.Address }

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

// ValidateCode checks the shape of a submitted code (six digits).
func ValidateCode(code string) error {
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return NewValidationError("code", "must be the 6 digits you received")
	}
	return nil
}
