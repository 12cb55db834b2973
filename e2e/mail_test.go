package e2e

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// withSMTP sends the app's email through a test SMTP server on loopback (no TLS: it is local).
func withSMTP(srv *testenv.SMTPServer) func(*ioc.Config) {
	return func(c *ioc.Config) {
		c.Mail.URL = fmt.Sprintf("smtp://%s?tls=none", net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
		c.Mail.From = "inkwell <no-reply@inkwell.test>"
		c.Server.RateAuth = "0"
	}
}

var (
	accountCodePattern = regexp.MustCompile(`\b[0-9A-Z]{5}-[0-9A-Z]{5}\b`)
	loginCodePattern   = regexp.MustCompile(`\b[0-9]{6}\b`)
)

// nextMailCode reads the next mail the server accepted, checks its recipient and subject, and
// returns the code that both its parts carry.
func nextMailCode(t *testing.T, srv *testenv.SMTPServer, to, subject string, pattern *regexp.Regexp) string {
	t.Helper()
	m := srv.Next(t)
	if len(m.Envelope.To) != 1 || m.Envelope.To[0] != to || !strings.Contains(m.Header.Get("Subject"), subject) {
		t.Fatalf("mail to %v about %q, want to %s about %q", m.Envelope.To, m.Header.Get("Subject"), to, subject)
	}
	code := pattern.FindString(m.Text)
	if code == "" || !strings.Contains(m.HTML, code) {
		t.Fatalf("no code in both parts of the mail:\n%s\n---\n%s", m.Text, m.HTML)
	}
	return code
}

func register(t *testing.T, app *testApp, username, email, password string) account {
	t.Helper()
	u := userOf(t, app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{
		"username": username, "email": email, "password": password,
	}}).Expect(t, http.StatusCreated))
	return account{Username: username, Email: email, Password: password, Token: u["token"].(string), Refresh: u["refreshToken"].(string)}
}

func passwordLogin(app *testApp, t *testing.T, email, password string) response {
	return app.call(t, "POST", "/api/users/login", "", map[string]any{"user": map[string]any{"email": email, "password": password}})
}

func TestEmailVerification(t *testing.T) {
	parallel(t)
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	app := startApp(t, withSMTP(srv))

	acc := register(t, app, "verifier", "Verifier@Example.com", "correct horse battery")
	code := nextMailCode(t, srv, "Verifier@Example.com", "Confirm your email", accountCodePattern) // the address as typed
	uid := app.userID(t, "verifier")
	if n := app.pgCount(t, `SELECT count(*) FROM users WHERE id = $1 AND email_verified_at IS NULL`, uid); n != 1 {
		t.Fatal("a new account's email is verified before its code came back")
	}
	if n := app.pgCount(t, `SELECT count(*) FROM account_codes WHERE user_id = $1 AND position($2 in encode(code_hash, 'escape')) = 0`, uid, code); n != 1 {
		t.Fatal("the verification code is not stored as a hash")
	}

	// Another code within the minute is refused with Retry-After; the first one stays good.
	again := app.call(t, "POST", "/api/user/email/verify/resend", acc.Token, nil).Expect(t, http.StatusTooManyRequests)
	if again.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	// Bad input and a wrong code are the same clear 422, never a 500.
	for _, body := range []any{
		map[string]any{"user": map[string]any{"code": "ZZZZZ-ZZZZZ"}},
		map[string]any{"user": map[string]any{"code": "not a code"}},
		map[string]any{"user": map[string]any{}},
	} {
		requireErrorField(t, app.call(t, "POST", "/api/user/email/verify", acc.Token, body), http.StatusUnprocessableEntity, "code")
	}
	app.call(t, "POST", "/api/user/email/verify", "", map[string]any{"user": map[string]any{"code": code}}).Expect(t, http.StatusUnauthorized)

	// The code as a person might type it: lower case, without the dash.
	typed := strings.ToLower(strings.ReplaceAll(code, "-", " "))
	ok := app.call(t, "POST", "/api/user/email/verify", acc.Token, map[string]any{"user": map[string]any{"code": typed}}).
		Expect(t, http.StatusOK).JSON(t)
	if ok["emailVerified"] != true || ok["email"] != "Verifier@Example.com" {
		t.Fatalf("verify answered %v", ok)
	}
	if n := app.pgCount(t, `SELECT count(*) FROM users WHERE id = $1 AND email_verified_at IS NOT NULL`, uid); n != 1 {
		t.Fatal("email not marked verified")
	}
	// Single use; and a verified email gets no more codes.
	requireErrorField(t, app.call(t, "POST", "/api/user/email/verify", acc.Token, map[string]any{"user": map[string]any{"code": code}}),
		http.StatusUnprocessableEntity, "code")
	requireErrorField(t, app.call(t, "POST", "/api/user/email/verify/resend", acc.Token, nil), http.StatusUnprocessableEntity, "email")

	// Changing the email makes it unverified again.
	app.call(t, "PUT", "/api/user", acc.Token, map[string]any{"user": map[string]any{"email": "verifier2@example.com", "currentPassword": acc.Password}}).
		Expect(t, http.StatusOK)
	if n := app.pgCount(t, `SELECT count(*) FROM users WHERE id = $1 AND email_verified_at IS NULL`, uid); n != 1 {
		t.Fatal("a changed email kept the old address's verification")
	}
}

func TestEmailVerification_WrongGuessesSpendTheCode(t *testing.T) {
	parallel(t)
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	app := startApp(t, withSMTP(srv))
	acc := register(t, app, "guesser", "guesser@example.com", "correct horse battery")
	code := nextMailCode(t, srv, "guesser@example.com", "Confirm your email", accountCodePattern)
	for range 5 {
		requireErrorField(t, app.call(t, "POST", "/api/user/email/verify", acc.Token, map[string]any{"user": map[string]any{"code": "ZZZZZ-ZZZZZ"}}),
			http.StatusUnprocessableEntity, "code")
	}
	requireErrorField(t, app.call(t, "POST", "/api/user/email/verify", acc.Token, map[string]any{"user": map[string]any{"code": code}}),
		http.StatusUnprocessableEntity, "code")
}

// TestPreAccountTakeover: an attacker registers the victim's email with a password, signs in and
// makes an API key. The victim, who owns the mailbox, signs in by code: the account becomes
// theirs alone, and every way the attacker had in stops working.
func TestPreAccountTakeover(t *testing.T) {
	parallel(t)
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	app := startApp(t, withSMTP(srv))

	attacker := register(t, app, "mallory", "victim@example.com", "attacker's password")
	nextMailCode(t, srv, "victim@example.com", "Confirm your email", accountCodePattern) // the victim ignores it
	second := logIn(t, app, attacker)
	key := app.call(t, "POST", "/api/user/api-keys", attacker.Token, map[string]any{"apiKey": map[string]any{"name": "backdoor"}}).
		Expect(t, http.StatusCreated).JSON(t)
	apiKey, _ := key["apiKey"].(map[string]any)["key"].(string)
	if apiKey == "" {
		t.Fatalf("no key in %v", key)
	}

	app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": "victim@example.com"}).Expect(t, http.StatusAccepted)
	code := nextMailCode(t, srv, "victim@example.com", "sign-in code", loginCodePattern)
	victim := userOf(t, app.call(t, "POST", "/api/users/login/code", "", map[string]any{"email": "victim@example.com", "code": code}).Expect(t, http.StatusOK))

	passwordLogin(app, t, "victim@example.com", "attacker's password").Expect(t, http.StatusUnauthorized)
	for name, token := range map[string]string{"first access token": attacker.Token, "second access token": second.Access, "API key": apiKey} {
		if r := app.call(t, "GET", "/api/user", token, nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("the attacker's %s still works after the takeover: %d %s", name, r.Status, r.Body)
		}
	}
	for _, refresh := range []string{attacker.Refresh, second.Refresh} {
		app.call(t, "POST", "/api/users/refresh", "", map[string]any{"refreshToken": refresh}).Expect(t, http.StatusUnauthorized)
	}
	app.call(t, "GET", "/api/user", victim["token"].(string), nil).Expect(t, http.StatusOK)
	if n := app.pgCount(t, `SELECT count(*) FROM users WHERE email = 'victim@example.com' AND email_verified_at IS NOT NULL`); n != 1 {
		t.Fatal("the taken-over email is not marked verified")
	}
}

// TestCodeLogin_VerifiedAccountIsNotTakenOver: the normal path. An owner who verified their email
// and signs in by code keeps their password, sessions and keys.
func TestCodeLogin_VerifiedAccountIsNotTakenOver(t *testing.T) {
	parallel(t)
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	app := startApp(t, withSMTP(srv))

	acc := register(t, app, "owner", "owner@example.com", "correct horse battery")
	code := nextMailCode(t, srv, "owner@example.com", "Confirm your email", accountCodePattern)
	app.call(t, "POST", "/api/user/email/verify", acc.Token, map[string]any{"user": map[string]any{"code": code}}).Expect(t, http.StatusOK)

	app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": "owner@example.com"}).Expect(t, http.StatusAccepted)
	login := nextMailCode(t, srv, "owner@example.com", "sign-in code", loginCodePattern)
	app.call(t, "POST", "/api/users/login/code", "", map[string]any{"email": "owner@example.com", "code": login}).Expect(t, http.StatusOK)

	passwordLogin(app, t, "owner@example.com", "correct horse battery").Expect(t, http.StatusOK)
	app.call(t, "GET", "/api/user", acc.Token, nil).Expect(t, http.StatusOK)
}

func TestPasswordReset(t *testing.T) {
	parallel(t)
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	app := startApp(t, withSMTP(srv))

	acc := register(t, app, "forgetful", "forgetful@example.com", "correct horse battery")
	nextMailCode(t, srv, "forgetful@example.com", "Confirm your email", accountCodePattern)
	other := logIn(t, app, acc)
	uid := app.userID(t, "forgetful")

	reset := func(email string) response {
		return app.call(t, "POST", "/api/users/password/reset", "", map[string]any{"user": map[string]any{"email": email}})
	}
	confirm := func(email, code, password string) response {
		return app.call(t, "POST", "/api/users/password/reset/confirm", "", map[string]any{"user": map[string]any{
			"email": email, "code": code, "password": password}})
	}

	// An unknown address gets the same answer, and nothing is stored or sent.
	unknown := reset("nobody@example.com").Expect(t, http.StatusAccepted)
	known := reset("Forgetful@example.com").Expect(t, http.StatusAccepted)
	if string(unknown.Body) != string(known.Body) {
		t.Fatalf("answers differ: %s vs %s", unknown.Body, known.Body)
	}
	code := nextMailCode(t, srv, "forgetful@example.com", "Reset your inkwell password", accountCodePattern)
	if n := app.pgCount(t, `SELECT count(*) FROM account_codes WHERE lower(email) = 'nobody@example.com'`); n != 0 {
		t.Fatal("a reset code was issued for an unknown address")
	}
	// A second request within the minute is answered alike but sends nothing: per-account rate
	// limit (the code issued first stays, sent when it was).
	sentAt := func() int64 {
		return app.pgCount(t, `SELECT (extract(epoch FROM sent_at) * 1e6)::bigint FROM account_codes WHERE purpose = 'reset_password' AND lower(email) = 'forgetful@example.com'`)
	}
	first := sentAt()
	reset("forgetful@example.com").Expect(t, http.StatusAccepted)
	if again := sentAt(); again != first {
		t.Fatal("a second reset code was issued within the resend interval")
	}
	requireErrorField(t, reset("not an email"), http.StatusUnprocessableEntity, "email")

	// Wrong code, unknown email, weak password: clear 422s, and the password is unchanged.
	requireErrorField(t, confirm("forgetful@example.com", "ZZZZZ-ZZZZZ", "a brand new password"), http.StatusUnprocessableEntity, "code")
	requireErrorField(t, confirm("nobody@example.com", code, "a brand new password"), http.StatusUnprocessableEntity, "code")
	requireErrorField(t, confirm("forgetful@example.com", code, "short"), http.StatusUnprocessableEntity, "password")
	passwordLogin(app, t, "forgetful@example.com", "correct horse battery").Expect(t, http.StatusOK)

	confirm("forgetful@example.com", code, "a brand new password").Expect(t, http.StatusNoContent)
	passwordLogin(app, t, "forgetful@example.com", "correct horse battery").Expect(t, http.StatusUnauthorized)
	passwordLogin(app, t, "forgetful@example.com", "a brand new password").Expect(t, http.StatusOK)
	for _, s := range []session{acc.session(), other} {
		app.call(t, "GET", "/api/user", s.Access, nil).Expect(t, http.StatusUnauthorized)
		app.call(t, "POST", "/api/users/refresh", "", map[string]any{"refreshToken": s.Refresh}).Expect(t, http.StatusUnauthorized)
	}
	// Single use; a reset also proves the mailbox, so the email is verified.
	requireErrorField(t, confirm("forgetful@example.com", code, "yet another password"), http.StatusUnprocessableEntity, "code")
	if n := app.pgCount(t, `SELECT count(*) FROM users WHERE id = $1 AND email_verified_at IS NOT NULL`, uid); n != 1 {
		t.Fatal("a reset did not mark the email verified")
	}
}

func TestPasswordReset_ExpiredCodeIsRefused(t *testing.T) {
	parallel(t)
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	app := startApp(t, withSMTP(srv))
	register(t, app, "late", "late@example.com", "correct horse battery")
	nextMailCode(t, srv, "late@example.com", "Confirm your email", accountCodePattern)
	app.call(t, "POST", "/api/users/password/reset", "", map[string]any{"user": map[string]any{"email": "late@example.com"}}).Expect(t, http.StatusAccepted)
	code := nextMailCode(t, srv, "late@example.com", "Reset your inkwell password", accountCodePattern)
	if n := app.pgCount(t, `SELECT count(*) FROM account_codes WHERE purpose = 'reset_password' AND expires_at BETWEEN now() + interval '14 minutes' AND now() + interval '15 minutes'`); n != 1 {
		t.Fatal("a reset code does not live 15 minutes")
	}
	// 15 minutes pass.
	if _, err := app.DB.Pool.Exec(t.Context(), `UPDATE account_codes SET expires_at = now() - interval '1 second' WHERE purpose = 'reset_password'`); err != nil {
		t.Fatal(err)
	}
	requireErrorField(t, app.call(t, "POST", "/api/users/password/reset/confirm", "", map[string]any{"user": map[string]any{
		"email": "late@example.com", "code": code, "password": "a brand new password"}}), http.StatusUnprocessableEntity, "code")
	passwordLogin(app, t, "late@example.com", "correct horse battery").Expect(t, http.StatusOK)
}
