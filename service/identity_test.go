package service_test

import (
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// TestCanonicalEmail_SameMailbox: spellings of one mailbox share a canonical form: ASCII case
// anywhere, the domain in any form IDNA maps to the same ASCII name (fullwidth, upper case,
// punycode, an ignored soft hyphen), and canonically equivalent local parts (NFC and NFD).
func TestCanonicalEmail_SameMailbox(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, a, b string }{
		{"ascii_case", "Alice@Example.COM", "alice@example.com"},
		{"fullwidth_domain", "alice@ｅｘａｍｐｌｅ.com", "alice@example.com"},
		{"idn_case", "v@STRAßE.de", "v@straße.de"},
		{"idn_punycode", "v@xn--strae-oqa.de", "v@straße.de"},
		{"idn_ignored_soft_hyphen", "a@exam\u00adple.com", "a@example.com"},
		{"composed_and_decomposed", "jos\u00e9@example.com", "jose\u0301@example.com"},
		// The Kelvin sign's canonical decomposition is the letter K: one text, not a look-alike.
		{"kelvin_sign_is_k", "\u212aate@example.com", "kate@example.com"},
		{"spaces_trimmed", "  bob@example.com ", "bob@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if ca, cb := service.CanonicalEmail(tc.a), service.CanonicalEmail(tc.b); ca != cb {
				t.Fatalf("%q -> %q and %q -> %q, want one canonical form", tc.a, ca, tc.b, cb)
			}
		})
	}
}

// TestCanonicalEmail_DifferentMailboxes: addresses the rule before 00025 merged (NFKC and full
// case folding) are different mailboxes: another domain, or a local part only its server
// interprets. Dotless and dotted i and the long s guard against Unicode lower-casing and folding
// (strings.ToLower maps "İ" to "i"; case folding maps "ſ" to "s").
func TestCanonicalEmail_DifferentMailboxes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, a, b string }{
		{"sharp_s_domain", "v@straße.de", "v@strasse.de"},
		{"sharp_s_local", "straße@example.com", "STRASSE@example.com"},
		{"final_sigma_domain", "v@ς.gr", "v@σ.gr"},
		{"final_sigma_local", "οδυσσευς@example.gr", "οδυσσευσ@example.gr"},
		{"greek_case_local", "ΟΔΥΣΣΕΥΣ@example.gr", "οδυσσευσ@example.gr"},
		{"fullwidth_local", "ａｌｉｃｅ@example.com", "alice@example.com"},
		{"dotless_i_local", "ılker@example.com", "ilker@example.com"},
		{"dotted_capital_i_local", "İlker@example.com", "ilker@example.com"},
		{"dotless_i_domain", "a@gıthub.com", "a@github.com"},
		{"dotted_capital_i_domain", "a@GİTHUB.com", "a@github.com"},
		{"long_s_local", "ſam@example.com", "sam@example.com"},
		{"other_domain", "alice@example.com", "alice@example.org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if ca, cb := service.CanonicalEmail(tc.a), service.CanonicalEmail(tc.b); ca == cb {
				t.Fatalf("%q and %q share the canonical form %q: they are different mailboxes", tc.a, tc.b, ca)
			}
		})
	}
	if got := service.LegacyCanonicalEmail("v@straße.de"); got != service.LegacyCanonicalEmail("v@strasse.de") {
		t.Fatalf("the legacy rule no longer merges ß and ss (%q): inkwell users collisions relies on it", got)
	}
}

// TestCanonicalEmail_StableForStorage: the canonical form is what the users table keeps, so it
// must be the same for its own output (a lookup by a stored canonical finds it).
func TestCanonicalEmail_StableForStorage(t *testing.T) {
	t.Parallel()
	for _, e := range []string{"V@Straße.DE", "jose\u0301@Example.com", "a@b_c.com", "ΟΔΥΣΣΕΥΣ@example.gr", "no-at-sign"} {
		c := service.CanonicalEmail(e)
		if again := service.CanonicalEmail(c); again != c {
			t.Fatalf("CanonicalEmail(%q) = %q, but CanonicalEmail(%q) = %q", e, c, c, again)
		}
	}
}

func TestValidateNewEmail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		email string
		want  string // a substring of the message; "" for accepted
	}{
		{"4915112345678@phone.invalid", "reserved"},
		{"someone@PHONE.INVALID", "reserved"},
		{"someone@phone.ｉｎｖａｌｉｄ", "reserved"},
		{"a@b.invalid", "reserved"},
		{"a@invalid.example.com", ""},
		{"a@example.com", ""},
		{"v@straße.de", ""},
		{"straße@example.com", ""},
		{"οδυσσευς@example.gr", ""},
		{"山田たろう@example.jp", ""},
		{"jose\u0301@example.com", ""},
		{"a@b_c.com", "IDNA"},
		{"a@-example.com", "IDNA"},
		{"a@xn--zz.com", "IDNA"},
		{"pаypal@example.com", "scripts"},      // a Cyrillic а among Latin letters
		{"ѕсоtt@example.com", "scripts"},       // Cyrillic look-alikes with one Latin t
		{"ａｌｉｃｅ@example.com", "compatibility"}, // fullwidth
		{"ſam@example.com", "compatibility"},
		{"a\u200bb@example.com", "invisible"},
	} {
		t.Run(tc.email, func(t *testing.T) {
			t.Parallel()
			v := &domain.ValidationError{}
			service.ValidateNewEmail(v, tc.email)
			err := v.OrNil()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ValidateNewEmail(%q) = %v, want accepted", tc.email, v.Fields)
			case tc.want != "" && (err == nil || !strings.Contains(strings.Join(v.Fields["email"], "; "), tc.want)):
				t.Fatalf("ValidateNewEmail(%q) = %v, want an email message about %q", tc.email, v.Fields, tc.want)
			}
		})
	}
}
