package service

import (
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/inkwell-dev/inkwell/domain"
)

// Two addresses are one account only when they are one mailbox. The domain is compared as DNS
// resolves it: UTS 46 (IDNA2008, non-transitional, so "straße.de" stays a domain of its own and
// is not "strasse.de") to ASCII. The local part belongs to the receiving server (RFC 5321 §2.4):
// it is compared exactly, except for ASCII letter case, which every real mail system ignores,
// and canonical equivalence (NFC: the same text in another encoding). No Unicode case folding and
// no compatibility mapping: "ß" is not "ss", final "ς" is not "σ", "ı" is not "i". The users table
// keeps the result in email_canonical (migration 00025); it lives in service because domain
// imports only the standard library.
var emailDomains = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule(), idna.VerifyDNSLength(true))

// CanonicalEmail is the form emails are compared and unique in (see emailDomains). A domain that
// IDNA refuses (new addresses with one are refused, see ValidateNewEmail; an account made before
// the rule may have one) keeps its text with ASCII letters lower-cased, which no IDNA result equals.
func CanonicalEmail(email string) string {
	email = strings.TrimSpace(email)
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return asciiLower(norm.NFC.String(email))
	}
	local, host := email[:at], email[at+1:]
	ascii, err := emailDomains.ToASCII(host)
	if err != nil {
		ascii = asciiLower(norm.NFC.String(host))
	}
	return asciiLower(norm.NFC.String(local)) + "@" + ascii
}

// LegacyCanonicalEmail is the rule before migration 00025: NFKC and full Unicode case folding of
// the whole address. It merged different mailboxes ("v@straße.de" and "v@strasse.de"); it is kept
// only so `inkwell users collisions` can list the accounts it made one address.
func LegacyCanonicalEmail(email string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(strings.TrimSpace(email))))
}

// asciiLower lower-cases ASCII letters only, byte by byte (an ASCII byte is never part of a
// multi-byte UTF-8 sequence), leaving every other byte as it is: text that is not UTF-8 stays so,
// and reaches PostgreSQL's refusal instead of turning into U+FFFD.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// ValidateNewEmail adds a message to v when email (already normalized) is not acceptable as a
// new address: malformed, or refused by NewEmailProblems.
func ValidateNewEmail(v *domain.ValidationError, email string) {
	if domain.ValidateEmail(v, email) {
		for _, p := range NewEmailProblems(email) {
			v.Add("email", p)
		}
	}
}

// NewEmailProblems lists why a well-formed email may not become an account's address: a domain
// IDNA refuses, a local part that could pass for another one (mixed scripts, compatibility forms
// such as fullwidth letters, invisible characters), or the reserved .invalid domain (phone
// accounts' placeholders, so nobody can take one). An account keeping the address it has is not
// checked: the rules apply to addresses, not to accounts made before them.
func NewEmailProblems(email string) []string {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return nil
	}
	local, host := email[:at], email[at+1:]
	var out []string
	if _, err := emailDomains.ToASCII(host); err != nil {
		out = append(out, "has a domain that is not a valid internationalized domain name (IDNA)")
	}
	out = append(out, localPartProblems(local)...)
	if domain.EmailReserved(CanonicalEmail(email)) {
		out = append(out, "uses a reserved domain")
	}
	return out
}

// localPartProblems checks the part before the @ against look-alikes. ASCII is always fine.
// Otherwise, after NFC, it must hold no invisible or control characters, no compatibility forms
// (what NFKC would change: fullwidth letters, ligatures, "ſ", superscripts), and its letters must
// be of one script, besides Common and Inherited, or one of the combinations writing systems use
// together (UTS 39 "highly restrictive": Latin with Han, Hiragana and Katakana; with Han and
// Bopomofo; with Han and Hangul).
func localPartProblems(local string) []string {
	if isASCII(local) {
		return nil
	}
	local = norm.NFC.String(local)
	var out []string
	for _, r := range local {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			out = append(out, "contains invisible or control characters")
			break
		}
	}
	if norm.NFKC.String(local) != local {
		out = append(out, "uses compatibility characters (such as fullwidth letters) before the @; type the plain form")
	}
	if !oneWritingSystem(local) {
		out = append(out, "mixes letters of different scripts before the @ (they could pass for another address); use one script")
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// writingSystems are the script combinations UTS 39 ("highly restrictive") allows in one
// identifier besides a single script.
var writingSystems = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

func oneWritingSystem(s string) bool {
	scripts := map[string]bool{}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsNumber(r) {
			continue
		}
		if name := scriptOf(r); name != "Common" && name != "Inherited" {
			scripts[name] = true
		}
	}
	if len(scripts) <= 1 {
		return true
	}
	for _, allowed := range writingSystems {
		covered := 0
		for _, name := range allowed {
			if scripts[name] {
				covered++
			}
		}
		if covered == len(scripts) {
			return true
		}
	}
	return false
}

// scriptOf is the Unicode script of r ("Unknown" for an unassigned code point).
func scriptOf(r rune) string {
	for _, name := range []string{"Latin", "Common", "Inherited", "Greek", "Cyrillic", "Han"} { // the likely ones first
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			return name
		}
	}
	return "Unknown"
}

// codeTargetKey is where a code target's code and budget are kept.
func codeTargetKey(t domain.CodeTarget) string {
	if t.Channel == "email" {
		return t.Key(CanonicalEmail(t.Address))
	}
	return t.Key(t.Address)
}
