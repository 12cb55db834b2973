package service

import (
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/inkwell-dev/inkwell/domain"
)

// CanonicalEmail is the form emails are compared and unique in: NFKC-normalized and case-folded
// (then NFKC again, as folding may denormalize), so "Ａlice@Example.com" and "alice@example.com"
// are one address. The users table keeps it in email_canonical (migration 00016); emails are
// stored as typed. It lives in service because domain imports only the standard library.
func CanonicalEmail(email string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(strings.TrimSpace(email))))
}

// ValidateNewEmail adds a message to v when email (already normalized) is not acceptable as a
// new address: malformed, or under the reserved .invalid domain in its canonical form (the
// domain of phone accounts' placeholders, so nobody can take one).
func ValidateNewEmail(v *domain.ValidationError, email string) {
	if domain.ValidateEmail(v, email) && domain.EmailReserved(CanonicalEmail(email)) {
		v.Add("email", "uses a reserved domain")
	}
}

// codeTargetKey is where a code target's code and budget are kept.
func codeTargetKey(t domain.CodeTarget) string {
	if t.Channel == "email" {
		return t.Key(CanonicalEmail(t.Address))
	}
	return t.Key(t.Address)
}
