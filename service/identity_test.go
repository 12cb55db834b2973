package service_test

import (
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

func TestCanonicalEmail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, a, b string }{
		{"case", "Alice@Example.COM", "alice@example.com"},
		{"fullwidth_letters", "Ａｌｉｃｅ@example.com", "alice@example.com"},
		{"composed_and_decomposed", "jos\u00e9@example.com", "jose\u0301@example.com"},
		{"sharp_s_folds", "STRASSE@example.com", "straße@example.com"},
		{"spaces_trimmed", "  bob@example.com ", "bob@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if ca, cb := service.CanonicalEmail(tc.a), service.CanonicalEmail(tc.b); ca != cb {
				t.Fatalf("%q -> %q and %q -> %q, want one canonical form", tc.a, ca, tc.b, cb)
			}
		})
	}
	if service.CanonicalEmail("alice@example.com") == service.CanonicalEmail("alice@example.org") {
		t.Fatal("different addresses share a canonical form")
	}
}

func TestValidateNewEmail_ReservedDomain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		email string
		ok    bool
	}{
		{"4915112345678@phone.invalid", false},
		{"someone@PHONE.INVALID", false},
		{"someone@phone.ｉｎｖａｌｉｄ", false},
		{"a@b.invalid", false},
		{"a@invalid.example.com", true},
		{"a@example.com", true},
	} {
		t.Run(tc.email, func(t *testing.T) {
			t.Parallel()
			v := &domain.ValidationError{}
			service.ValidateNewEmail(v, tc.email)
			if (v.OrNil() == nil) != tc.ok {
				t.Fatalf("ValidateNewEmail(%q) = %v, want ok=%v", tc.email, v.OrNil(), tc.ok)
			}
		})
	}
}
