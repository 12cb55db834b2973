package domain

import (
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// User is a registered account. PasswordHash is an encoded Argon2id hash, never a password.
type User struct {
	ID           int64
	Email        string
	Username     string
	PasswordHash string
	Bio          string
	Image        string
	// EmailVerified: the owner proved they read Email (a verification or reset code, a code login).
	EmailVerified bool
	// Role is what the account may do beyond its own content (RoleUser unless made otherwise).
	Role Role
	// Suspension is the account's latest suspension (zero when never suspended); it holds while
	// Suspension.InForce.
	Suspension Suspension
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Profile is the public view of a user, seen by a (possibly anonymous) viewer.
type Profile struct {
	Username  string
	Bio       string
	Image     string
	Following bool
	// Blocking tells whether the viewer blocks this user (set by the profile endpoints only).
	Blocking bool
}

// ProfileOf returns u's public profile; following tells whether the viewer follows u.
func ProfileOf(u User, following bool) Profile {
	return Profile{Username: u.Username, Bio: u.Bio, Image: u.Image, Following: following}
}

// Limits on account fields. They keep rows and cache entries small and make abuse (multi-megabyte
// bios, passwords that take seconds to hash) a 422 instead of a slow request.
const (
	MaxEmailLen    = 254 // RFC 5321 path limit
	MinUsernameLen = 1
	MaxUsernameLen = 40
	MinPasswordLen = 8
	MaxPasswordLen = 256
	MaxBioLen      = 4000
	MaxImageLen    = 2048
)

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// reservedUsernames are refused as usernames (compared lower-cased): route segments a profile
// URL could be confused with, and names that would pass for the operators.
var reservedUsernames = map[string]bool{
	"admin": true, "administrator": true, "api": true, "article": true, "articles": true,
	"collections": true, "editor": true, "feed": true, "help": true, "inkwell": true, "login": true,
	"logout": true, "me": true, "new": true, "notifications": true, "null": true, "profile": true,
	"profiles": true, "register": true, "root": true, "settings": true, "support": true,
	"system": true, "tags": true, "undefined": true, "user": true, "users": true, "www": true,
}

// NormalizeEmail trims an email; it is stored as typed otherwise. Emails are compared in their
// canonical form (service.CanonicalEmail: NFKC and case folding need golang.org/x/text, which
// domain does not import).
func NormalizeEmail(email string) string { return strings.TrimSpace(email) }

// reservedEmailDomain is the domain of the placeholder emails phone accounts get (see
// repository.UserRepository.FindOrCreateByTarget). The whole .invalid TLD is refused (RFC 2606:
// it never resolves), so no one can register a phone account's placeholder and block its login.
const reservedEmailDomain = ".invalid"

// EmailReserved reports an email, given in its canonical form, under the reserved .invalid
// domain. New addresses are checked with it (service.ValidateNewEmail); an account keeping its
// email (a phone account's placeholder) is not.
func EmailReserved(canonical string) bool { return strings.HasSuffix(canonical, reservedEmailDomain) }

// ValidateEmail adds a message to v when email (already normalized) is malformed, and reports
// whether it is well formed.
func ValidateEmail(v *ValidationError, email string) bool {
	n := len(v.Fields["email"])
	switch {
	case email == "":
		v.Add("email", "can't be blank")
	case len(email) > MaxEmailLen:
		v.Add("email", "is too long (maximum is 254 characters)")
	default:
		addr, err := mail.ParseAddress(email)
		if err != nil || addr.Address != email || !strings.Contains(email[strings.LastIndex(email, "@")+1:], ".") {
			v.Add("email", "is invalid")
		}
	}
	return len(v.Fields["email"]) == n
}

// ValidateUsername adds a message to v when username is not acceptable for a new name.
func ValidateUsername(v *ValidationError, username string) {
	if ValidateUsernameFormat(v, username) && UsernameReserved(username) {
		v.Add("username", "is reserved")
	}
}

// UsernameReserved reports a reserved username (compared lower-cased).
func UsernameReserved(username string) bool { return reservedUsernames[strings.ToLower(username)] }

// ValidateUsernameFormat adds a message to v when username breaks the character rules, and
// reports whether it keeps them. An account keeping its name needs only this.
func ValidateUsernameFormat(v *ValidationError, username string) bool {
	before := len(v.Fields["username"])
	n := utf8.RuneCountInString(username)
	switch {
	case username == "":
		v.Add("username", "can't be blank")
	case n > MaxUsernameLen:
		v.Add("username", "is too long (maximum is 40 characters)")
	case !usernamePattern.MatchString(username):
		v.Add("username", "may contain only letters, digits, '.', '_' and '-'")
	case strings.Trim(username, ".") == "":
		v.Add("username", "must contain a letter, digit, '_' or '-'")
	}
	return len(v.Fields["username"]) == before
}

// ValidatePassword adds a message to v when password is not acceptable.
func ValidatePassword(v *ValidationError, password string) {
	n := utf8.RuneCountInString(password)
	switch {
	case password == "":
		v.Add("password", "can't be blank")
	case n < MinPasswordLen:
		v.Add("password", "is too short (minimum is 8 characters)")
	case len(password) > MaxPasswordLen:
		v.Add("password", "is too long (maximum is 256 bytes)")
	}
}

// ValidateBio adds a message to v when bio is too long.
func ValidateBio(v *ValidationError, bio string) {
	if utf8.RuneCountInString(bio) > MaxBioLen {
		v.Add("bio", "is too long (maximum is 4000 characters)")
	}
}

// ValidateImage adds a message to v when image is neither an https URL nor the path of an upload
// ("/media/<key>"; the use case checks it is the user's own), or is too long. An empty image is
// allowed and means "no picture".
func ValidateImage(v *ValidationError, image string) { ValidateImageURL(v, "image", image) }
