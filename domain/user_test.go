package domain_test

import (
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
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
			if ca, cb := domain.CanonicalEmail(tc.a), domain.CanonicalEmail(tc.b); ca != cb {
				t.Fatalf("%q -> %q and %q -> %q, want one canonical form", tc.a, ca, tc.b, cb)
			}
		})
	}
	if domain.CanonicalEmail("alice@example.com") == domain.CanonicalEmail("alice@example.org") {
		t.Fatal("different addresses share a canonical form")
	}
}

func TestValidateEmail_ReservedDomain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		email string
		ok    bool
	}{
		{"4915112345678@phone.invalid", false},
		{"someone@PHONE.INVALID", false},
		{"a@b.invalid", false},
		{"a@invalid.example.com", true},
		{"a@example.com", true},
	} {
		t.Run(tc.email, func(t *testing.T) {
			t.Parallel()
			v := &domain.ValidationError{}
			domain.ValidateEmail(v, tc.email)
			if (v.OrNil() == nil) != tc.ok {
				t.Fatalf("ValidateEmail(%q) = %v, want ok=%v", tc.email, v.OrNil(), tc.ok)
			}
			f := &domain.ValidationError{}
			if !domain.ValidateEmailFormat(f, tc.email) || f.OrNil() != nil {
				t.Fatalf("%q is well formed: %v", tc.email, f.OrNil())
			}
		})
	}
}

func TestValidateUsername(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"jake", true}, {"j.doe-2_x", true}, {".hidden", true}, {"a..b", true},
		{".", false}, {"..", false}, {"....", false}, {"", false}, {"with space", false}, {"ünïcode", false},
		{"api", false}, {"Admin", false}, {"USERS", false}, {"profiles", false}, {"articles", false}, {"user", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := &domain.ValidationError{}
			domain.ValidateUsername(v, tc.name)
			if (v.OrNil() == nil) != tc.ok {
				t.Fatalf("ValidateUsername(%q) = %v, want ok=%v", tc.name, v.OrNil(), tc.ok)
			}
		})
	}
}
