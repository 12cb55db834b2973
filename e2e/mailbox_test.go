package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// Issue #26: emails were compared after NFKC and full Unicode case folding, so whoever read one
// mailbox could sign in to the account of another ("v@straße.de" is another domain than
// "v@strasse.de"; "ς" and "σ" are different local parts). Two addresses are one account now only
// when they are one mailbox, and every code goes to the address stored on the account.

// mailboxTwins are pairs of different mailboxes the old rule made one address, or that a careless
// rule (Unicode lower-casing: strings.ToLower maps "İ" to "i") would.
var mailboxTwins = []struct{ name, victim, twin string }{
	{"sharp_s_domain", "v@strasse.de", "v@straße.de"},
	{"sharp_s_domain_reversed", "w@straße.de", "w@strasse.de"},
	{"sharp_s_local", "strasse@example.com", "straße@example.com"},
	{"final_sigma_local", "οδυσσευς@example.gr", "οδυσσευσ@example.gr"},
	{"final_sigma_local_reversed", "ηλιοσ@example.gr", "ηλιος@example.gr"},
	{"final_sigma_domain", "a@ςς.gr", "a@σσ.gr"},
	{"dotless_i", "ilker@example.com", "ılker@example.com"},
	{"dotted_capital_i", "ilkay@example.com", "İlkay@example.com"},
}

// codeLogin asks for a code for email, takes it from the inbox of address (where it must arrive)
// and signs in with it, returning the user.
func codeLogin(t *testing.T, app *testApp, inbox *codeInbox, email, address string, headers ...string) map[string]any {
	t.Helper()
	app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": email}, headers...).Expect(t, http.StatusAccepted)
	code := inbox.next(t, address)
	return userOf(t, app.call(t, "POST", "/api/users/login/code", "", map[string]any{"email": email, "code": code}, headers...).Expect(t, http.StatusOK))
}

// boxIsEmpty reports whether nothing waits in address's inbox. Call it once every job that could
// have delivered there is done.
func (in *codeInbox) boxIsEmpty(address string) bool { return len(in.box(address)) == 0 }

// waitForDeliveries waits until no delivery job is left, so an inbox that got nothing got nothing.
func (a *testApp) waitForDeliveries(t *testing.T) {
	t.Helper()
	a.waitFor("every delivery job is done", func() bool {
		return a.pgCount(t, `SELECT count(*) FROM jobs WHERE kind IN ('send_code', 'send_account_mail')`) == 0
	})
}

// TestMailboxTwins_CodeLogin: whoever reads the twin mailbox gets an account of their own by code
// login; the victim's verified account, its email and its sessions are untouched, and no code
// goes to the victim.
func TestMailboxTwins_CodeLogin(t *testing.T) {
	parallel(t)
	app, inbox := startCodeApp(t, noAuthLimit)
	for _, tc := range mailboxTwins {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			victim := codeLogin(t, app, inbox, tc.victim, tc.victim)
			attacker := codeLogin(t, app, inbox, tc.twin, tc.twin)
			if attacker["username"] == victim["username"] || attacker["email"] != tc.twin {
				t.Fatalf("a code read at %s signed in to %v, the account of %s", tc.twin, attacker, tc.victim)
			}
			me := userOf(t, app.call(t, "GET", "/api/user", victim["token"].(string), nil).Expect(t, http.StatusOK))
			if me["email"] != tc.victim || me["username"] != victim["username"] {
				t.Fatalf("the victim's account is now %v", me)
			}
			app.waitForDeliveries(t)
			if !inbox.boxIsEmpty(tc.victim) {
				t.Fatalf("a code went to %s for %s's login", tc.victim, tc.twin)
			}
			if app.pgCount(t, `SELECT count(*) FROM users WHERE email IN ($1, $2)`, tc.victim, tc.twin) != 2 {
				t.Fatal("the twins do not have an account each")
			}
		})
	}
}

// TestMailboxTwins_SameMailboxSpelledOtherwise: a fullwidth domain is the same domain (IDNA maps
// it), so it reaches the same account, but its code goes to the address stored on the account,
// never to the spelling typed; a fullwidth local part is refused as a look-alike.
func TestMailboxTwins_SameMailboxSpelledOtherwise(t *testing.T) {
	parallel(t)
	app, inbox := startCodeApp(t, noAuthLimit)
	victim := codeLogin(t, app, inbox, "Fw@Example.com", "fw@example.com")
	if err := testenv.NewRedis(t).Client.Del(context.Background(), app.Cfg.Redis.Prefix+"logincode:{email:fw@example.com}").Err(); err != nil {
		t.Fatal(err) // as at the end of the resend interval
	}

	app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": "fw@ｅｘａｍｐｌｅ.com"}).Expect(t, http.StatusAccepted)
	code := app.codeOf(inbox, "email:fw@example.com") // delivered to Fw@Example.com, the stored address
	app.waitForDeliveries(t)
	if !inbox.boxIsEmpty("fw@ｅｘａｍｐｌｅ.com") {
		t.Fatal("the code went to the spelling typed")
	}
	again := userOf(t, app.call(t, "POST", "/api/users/login/code", "", map[string]any{"email": "fw@ｅｘａｍｐｌｅ.com", "code": code}).Expect(t, http.StatusOK))
	if again["username"] != victim["username"] {
		t.Fatalf("one mailbox, two accounts: %v and %v", victim, again)
	}

	for _, path := range []string{"/api/users/login/code/send", "/api/users/login/code"} {
		res := app.call(t, "POST", path, "", map[string]any{"email": "ｆw@example.com", "code": "123456"}).Expect(t, http.StatusUnprocessableEntity)
		if msg := errorsOf(t, res)["email"]; msg == nil || !strings.Contains(msg.([]any)[0].(string), "compatibility characters") {
			t.Fatalf("%s with a fullwidth local part: %s", path, res.Body)
		}
	}
	res := app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{"email": "ｆw@example.com", "username": "fwwide", "password": "password123"}})
	requireErrorField(t, res, http.StatusUnprocessableEntity, "email")
	res = app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{"email": "FW@ｅｘａｍｐｌｅ.com", "username": "fwtwin", "password": "password123"}})
	if msg := errorsOf(t, res.Expect(t, http.StatusUnprocessableEntity))["email"]; msg == nil || msg.([]any)[0] != "has already been taken" {
		t.Fatalf("the same mailbox registered twice: %s", res.Body)
	}
	// A reset asked for with the other spelling mails the stored address, too.
	app.call(t, "POST", "/api/users/password/reset", "", map[string]any{"user": map[string]any{"email": "fw@ｅｘａｍｐｌｅ.com"}}).Expect(t, http.StatusAccepted)
	if reset := inbox.next(t, "fw@example.com"); !accountCodePattern.MatchString(reset) {
		t.Fatalf("reset code %q", reset)
	}
	app.waitForDeliveries(t)
	if !inbox.boxIsEmpty("fw@ｅｘａｍｐｌｅ.com") {
		t.Fatal("the reset code went to the spelling typed")
	}
}

// TestMailboxTwins_PreRegistration: whoever registers the twin first has an account of their own;
// the real owner registers too, and the owner's code login and reset mails reach the owner, never
// the twin; the twin's reset code resets only the twin's account.
func TestMailboxTwins_PreRegistration(t *testing.T) {
	parallel(t)
	app, inbox := startCodeApp(t, noAuthLimit)
	for i, tc := range mailboxTwins {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			register := func(email, username string) map[string]any {
				t.Helper()
				u := userOf(t, app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{
					"email": email, "username": username, "password": "password of " + username}}).Expect(t, http.StatusCreated))
				inbox.next(t, email) // the verification code, mailed to the address registered
				return u
			}
			squatter := register(tc.twin, "squatter"+string(rune('a'+i)))
			owner := register(tc.victim, "owner"+string(rune('a'+i)))

			again := codeLogin(t, app, inbox, tc.victim, tc.victim)
			if again["username"] != owner["username"] {
				t.Fatalf("the owner's code login landed in %v", again)
			}
			app.call(t, "POST", "/api/users/password/reset", "", map[string]any{"user": map[string]any{"email": tc.victim}}).Expect(t, http.StatusAccepted)
			ownerCode := inbox.next(t, tc.victim)
			app.call(t, "POST", "/api/users/password/reset", "", map[string]any{"user": map[string]any{"email": tc.twin}}).Expect(t, http.StatusAccepted)
			squatterCode := inbox.next(t, tc.twin)

			// The squatter's code is no code of the owner's account, and the owner's none of the squatter's.
			confirm := func(email, code, password string) response {
				return app.call(t, "POST", "/api/users/password/reset/confirm", "", map[string]any{"user": map[string]any{
					"email": email, "code": code, "password": password}})
			}
			requireErrorField(t, confirm(tc.victim, squatterCode, "taken over!"), http.StatusUnprocessableEntity, "code")
			requireErrorField(t, confirm(tc.twin, ownerCode, "taken over!"), http.StatusUnprocessableEntity, "code")
			confirm(tc.twin, squatterCode, "the squatter's new one").Expect(t, http.StatusNoContent)
			passwordLogin(app, t, tc.victim, "the squatter's new one").Expect(t, http.StatusUnauthorized)
			confirm(tc.victim, ownerCode, "the owner's new one").Expect(t, http.StatusNoContent)
			passwordLogin(app, t, tc.victim, "the owner's new one").Expect(t, http.StatusOK)
			passwordLogin(app, t, tc.twin, "the squatter's new one").Expect(t, http.StatusOK)
			if squatter["username"] == owner["username"] {
				t.Fatal("one account for two mailboxes")
			}
		})
	}
}

// TestRegistrationMailCommitsWithTheAccount: the verification code and its mail job are written in
// the account's unit of work, so an account is never committed without its mail: when they
// cannot be written, there is no account either (and the answer is an error, not 201), with an
// Idempotency-Key or without.
func TestRegistrationMailCommitsWithTheAccount(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit)
	ctx := context.Background()
	if _, err := app.DB.Pool.Exec(ctx, `ALTER TABLE account_codes RENAME TO account_codes_away`); err != nil {
		t.Fatal(err)
	}
	body := func(name string) map[string]any {
		return map[string]any{"user": map[string]any{"email": name + "@example.com", "username": name, "password": "password123"}}
	}
	app.call(t, "POST", "/api/users", "", body("nomail")).Expect(t, http.StatusInternalServerError)
	app.call(t, "POST", "/api/users", "", body("nomailkeyed"), "Idempotency-Key", "k1").Expect(t, http.StatusInternalServerError)
	if n := app.pgCount(t, `SELECT count(*) FROM users WHERE username IN ('nomail', 'nomailkeyed')`); n != 0 {
		t.Fatalf("%d accounts committed without their verification mail", n)
	}
	if _, err := app.DB.Pool.Exec(ctx, `ALTER TABLE account_codes_away RENAME TO account_codes`); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"withmail", "withmailkeyed"} {
		headers := []string{}
		if strings.HasSuffix(name, "keyed") {
			headers = []string{"Idempotency-Key", "k2"}
		}
		app.call(t, "POST", "/api/users", "", body(name), headers...).Expect(t, http.StatusCreated)
		// Committed with the answer, not after it.
		if n := app.pgCount(t, `SELECT count(*) FROM account_codes c JOIN users u ON u.id = c.user_id
			WHERE u.username = $1 AND c.purpose = 'verify_email'`, name); n != 1 {
			t.Fatalf("%s: %d verification codes when the registration answered", name, n)
		}
	}
}

// TestCodeBudgetsCannotLockOutTheOwner: an attacker who knows an email cannot spend its owner's
// budgets: wrong guesses at a reset code from one client leave the code good for the owner's
// client, and one client's daily sends do not use up the owner's. (A locked login target gets a
// strong code: TestCodeLoginFailureBudget.)
func TestCodeBudgetsCannotLockOutTheOwner(t *testing.T) {
	parallel(t)
	inProcess(t, "sets tuning constants through ioc.Config.Tune, which no setting carries to a process")
	app, inbox := startCodeApp(t, noAuthLimit, func(c *ioc.Config) {
		c.Server.TrustedProxies = "127.0.0.1" // X-Forwarded-For names the client
		c.Tune.CodeDailySends = new(2)
	})
	const (
		owner    = "192.0.2.1"
		attacker = "198.51.100.7"
	)
	user := userOf(t, app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{
		"email": "locked.out@example.com", "username": "lockedout", "password": "password123"}}).Expect(t, http.StatusCreated))
	inbox.next(t, "locked.out@example.com") // the verification code

	app.call(t, "POST", "/api/users/password/reset", "", map[string]any{"user": map[string]any{"email": "locked.out@example.com"}},
		"X-Forwarded-For", owner).Expect(t, http.StatusAccepted)
	code := inbox.next(t, "locked.out@example.com")
	for range 12 {
		requireErrorField(t, app.call(t, "POST", "/api/users/password/reset/confirm", "", map[string]any{"user": map[string]any{
			"email": "locked.out@example.com", "code": "ZZZZZ-ZZZZZ", "password": "attacker's choice"}}, "X-Forwarded-For", attacker),
			http.StatusUnprocessableEntity, "code")
	}
	app.call(t, "POST", "/api/users/password/reset/confirm", "", map[string]any{"user": map[string]any{
		"email": "locked.out@example.com", "code": code, "password": "the owner's choice"}}, "X-Forwarded-For", owner).Expect(t, http.StatusNoContent)
	passwordLogin(app, t, "locked.out@example.com", "the owner's choice").Expect(t, http.StatusOK)

	rdb := testenv.NewRedis(t).Client
	pastResend := func() {
		t.Helper()
		if err := rdb.Del(context.Background(), app.Cfg.Redis.Prefix+"logincode:{email:locked.out@example.com}").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": "locked.out@example.com"}, "X-Forwarded-For", attacker).
			Expect(t, http.StatusAccepted)
		inbox.next(t, "locked.out@example.com")
		pastResend()
	}
	requireErrorField(t, app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": "locked.out@example.com"}, "X-Forwarded-For", attacker),
		http.StatusTooManyRequests, "code")
	signedIn := codeLogin(t, app, inbox, "locked.out@example.com", "locked.out@example.com", "X-Forwarded-For", owner)
	if signedIn["username"] != user["username"] {
		t.Fatalf("the owner's code login landed in %v", signedIn)
	}
}
