package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// The sign-in with a provider (#30) against a real OpenID provider (internal/tools/oidcop, a
// process of its own): the API's public URL is a fixed name the provider redirects the browser to;
// the tests send that redirect's path and query to the app under test.
const (
	oidcPublicURL = "http://inkwell.test"
	oidcFrontEnd  = "https://app.example"
	oidcClientID  = "inkwell"
)

type oidcEnv struct {
	app      *testApp
	op       *testenv.OIDCProvider
	noFollow *http.Client
}

// startOIDC serves an app with the provider "corp" at a fresh OpenID provider.
func startOIDC(t *testing.T, tweak ...func(*ioc.Config)) *oidcEnv {
	t.Helper()
	op := testenv.StartOIDCProvider(t)
	op.AddClient(t, oidcClientID, "s3cret", oidcPublicURL+"/api/auth/oidc/corp/callback")
	env := map[string]string{"INKWELL_OIDC_CORP_ISSUER": op.Issuer(), "INKWELL_OIDC_CORP_CLIENT_ID": oidcClientID,
		"INKWELL_OIDC_CORP_CLIENT_SECRET": "s3cret", "INKWELL_OIDC_CORP_DISPLAY_NAME": "Corp SSO"}
	settings := func(c *ioc.Config) {
		c.Server.PublicURL, c.SignIn.Providers, c.SignIn.RedirectAllow = oidcPublicURL, "corp", oidcFrontEnd
		c.SignIn.Env = func(k string) string { return env[k] }
		c.Server.RateAuth = "0"
	}
	app := startApp(t, append([]func(*ioc.Config){settings}, tweak...)...)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	e := &oidcEnv{app: app, op: op, noFollow: noFollow}
	// Discovery runs at start; a loopback issuer answers at once, but wait rather than assume.
	testenv.WaitUntil(t, "the provider's discovery", func() bool {
		return strings.Contains(string(app.call(t, "GET", "/api/auth/providers", "", nil).Body), `"available":true`)
	})
	return e
}

// start begins a sign-in: the provider's authorization URL and the browser-binding cookie.
func (e *oidcEnv) start(t *testing.T, redirect string) (authorize, cookie string) {
	t.Helper()
	res, err := e.app.fetch(e.noFollow, "GET", "/api/auth/oidc/corp/start?redirect="+url.QueryEscape(redirect), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Expect(t, http.StatusFound)
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == "inkwell_sign_in" {
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/api/auth/oidc/corp/callback" || c.Value == "" {
				t.Fatalf("sign-in cookie %+v: want HttpOnly, SameSite=Lax, the callback's path", c)
			}
			cookie = c.Value
		}
	}
	if cookie == "" {
		t.Fatalf("start set no sign-in cookie: %v", res.Header)
	}
	return res.Header.Get("Location"), cookie
}

// callback sends the provider's redirect back (its path and query) to the app with cookie.
func (e *oidcEnv) callback(t *testing.T, callbackURL, cookie string) response {
	t.Helper()
	u, err := url.Parse(callbackURL)
	if err != nil {
		t.Fatal(err)
	}
	var headers []string
	if cookie != "" {
		headers = []string{"Cookie", "inkwell_sign_in=" + cookie}
	}
	res, err := e.app.fetch(e.noFollow, "GET", u.RequestURI(), "", nil, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// frontEnd is where a callback sent the browser: the front end's URL and its query.
func frontEnd(t *testing.T, res response) url.Values {
	t.Helper()
	res.Expect(t, http.StatusFound)
	to, err := url.Parse(res.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(to.String(), oidcFrontEnd+"/signed-in") {
		t.Fatalf("callback redirected to %q, want the front end", res.Header.Get("Location"))
	}
	for key := range to.Query() {
		if key != "code" && key != "error" && key != "linked" {
			t.Fatalf("the front end's URL carries %q: %s", key, to)
		}
	}
	return to.Query()
}

// signIn runs the whole flow for the provider's user and returns the front end's query.
func (e *oidcEnv) signIn(t *testing.T, username, password string) url.Values {
	t.Helper()
	authorize, cookie := e.start(t, oidcFrontEnd+"/signed-in")
	back := e.op.SignIn(t, e.noFollow, authorize, username, password)
	return frontEnd(t, e.callback(t, back, cookie))
}

// exchange trades a one-time code for the login answer.
func (e *oidcEnv) exchange(t *testing.T, code string) response {
	t.Helper()
	return e.app.call(t, "POST", "/api/auth/oidc/exchange", "", map[string]any{"code": code})
}

// signedIn runs the flow and the exchange: the session's user.
func (e *oidcEnv) signedIn(t *testing.T, username, password string) map[string]any {
	t.Helper()
	q := e.signIn(t, username, password)
	if q.Get("code") == "" {
		t.Fatalf("sign-in of %s ended with %v, want a code", username, q)
	}
	return userOf(t, e.exchange(t, q.Get("code")).Expect(t, http.StatusOK))
}

func (e *oidcEnv) user(t *testing.T, u testenv.OIDCUser) testenv.OIDCUser {
	t.Helper()
	if u.Password == "" {
		u.Password = "provider password"
	}
	e.op.AddUser(t, u)
	return u
}

// TestOIDC_SignIn: the whole flow without a browser, and each rule of the callback.
func TestOIDC_SignIn(t *testing.T) {
	parallel(t)
	srv := testenv.StartSMTPServer(t, testenv.SMTPOptions{})
	e := startOIDC(t, withSMTP(srv))
	app := e.app

	t.Run("providers", func(t *testing.T) {
		body := app.call(t, "GET", "/api/auth/providers", "", nil).Expect(t, http.StatusOK).JSON(t)
		list := body["providers"].([]any)
		p := list[0].(map[string]any)
		if len(list) != 1 || p["name"] != "corp" || p["displayName"] != "Corp SSO" || p["available"] != true {
			t.Fatalf("providers %v", body)
		}
	})

	t.Run("new account, session ordinary", func(t *testing.T) {
		u := e.user(t, testenv.OIDCUser{Username: "ada", Subject: "sub-ada", Email: "ada@corp.example", EmailVerified: true,
			Name: "Ada Lovelace", PreferredUsername: "ada.l"})
		authorize, cookie := e.start(t, oidcFrontEnd+"/signed-in")
		for _, want := range []string{"response_type=code", "client_id=" + oidcClientID, "code_challenge_method=S256", "code_challenge=", "nonce=", "state=",
			"redirect_uri=" + url.QueryEscape(oidcPublicURL+"/api/auth/oidc/corp/callback")} {
			if !strings.Contains(authorize, want) {
				t.Errorf("authorization URL %s lacks %s", authorize, want)
			}
		}
		back := e.op.SignIn(t, e.noFollow, authorize, u.Username, u.Password)
		q := frontEnd(t, e.callback(t, back, cookie))
		me := userOf(t, e.exchange(t, q.Get("code")).Expect(t, http.StatusOK))
		if me["username"] != "ada.l" || me["email"] != "ada@corp.example" || me["token"] == "" || me["refreshToken"] == "" {
			t.Fatalf("exchanged user %v", me)
		}
		token := me["token"].(string)
		app.call(t, "GET", "/api/user", token, nil).Expect(t, http.StatusOK)
		if n := app.pgCount(t, `SELECT count(*) FROM users WHERE email = 'ada@corp.example' AND email_verified_at IS NOT NULL`); n != 1 {
			t.Fatal("the provider verified the email, the account's is not verified")
		}
		sessions := app.call(t, "GET", "/api/user/sessions", token, nil).Expect(t, http.StatusOK).JSON(t)["sessions"].([]any)
		if len(sessions) != 1 {
			t.Fatalf("sessions %v", sessions)
		}
		id := sessions[0].(map[string]any)["id"].(string)
		app.call(t, "POST", "/api/users/refresh", "", map[string]any{"refreshToken": me["refreshToken"]}).Expect(t, http.StatusOK)
		app.call(t, "DELETE", "/api/user/sessions/"+id, token, nil).Expect(t, http.StatusNoContent)
		app.call(t, "GET", "/api/user", token, nil).Expect(t, http.StatusUnauthorized)

		// The same person again: the same account, through the link.
		again := e.signedIn(t, u.Username, u.Password)
		if again["username"] != "ada.l" {
			t.Fatalf("second sign-in is %v", again)
		}
		// The code is single use.
		requireErrorField(t, e.exchange(t, q.Get("code")), http.StatusUnprocessableEntity, "code")
		// Nothing secret at rest: states and codes are hashes, the verifier and nonce are not stored.
		if n := app.pgCount(t, `SELECT count(*) FROM sign_in_codes WHERE length(code_hash) <> 32`); n != 0 {
			t.Fatal("an exchange code is not stored as its sha256")
		}
	})

	t.Run("link by verified email, told by mail", func(t *testing.T) {
		acc := register(t, app, "grace", "grace@corp.example", "correct horse battery")
		code := nextMailCode(t, srv, "grace@corp.example", "Confirm your email", accountCodePattern)
		app.call(t, "POST", "/api/user/email/verify", acc.Token, map[string]any{"user": map[string]any{"code": code}}).Expect(t, http.StatusOK)
		u := e.user(t, testenv.OIDCUser{Username: "grace", Subject: "sub-grace", Email: "grace@corp.example", EmailVerified: true})
		me := e.signedIn(t, u.Username, u.Password)
		if me["username"] != "grace" {
			t.Fatalf("signed in as %v, want the account of the verified email", me)
		}
		m := srv.Next(t)
		if m.Envelope.To[0] != "grace@corp.example" || !strings.Contains(m.Header.Get("Subject"), "sign-in provider was linked") || !strings.Contains(m.Text, "Corp SSO") {
			t.Fatalf("notice mail %v %q", m.Envelope.To, m.Text)
		}
		ids := app.call(t, "GET", "/api/user/identities", me["token"].(string), nil).Expect(t, http.StatusOK).JSON(t)["identities"].([]any)
		if len(ids) != 1 || ids[0].(map[string]any)["provider"] != "corp" {
			t.Fatalf("identities %v", ids)
		}
		// grace has a password: the only identity may go.
		id := int64(ids[0].(map[string]any)["id"].(float64))
		app.call(t, "DELETE", "/api/user/identities/"+strconv.FormatInt(id, 10), me["token"].(string), nil).Expect(t, http.StatusNoContent)
	})

	t.Run("unverified email never links", func(t *testing.T) {
		register(t, app, "victim", "victim@corp.example", "correct horse battery")
		nextMailCode(t, srv, "victim@corp.example", "Confirm your email", accountCodePattern) // verified by nobody
		// The provider verified it, the account did not: no link, no takeover.
		u := e.user(t, testenv.OIDCUser{Username: "mallory", Subject: "sub-mallory", Email: "victim@corp.example", EmailVerified: true})
		if q := e.signIn(t, u.Username, u.Password); q.Get("error") != "email_in_use" {
			t.Fatalf("front end got %v, want error=email_in_use", q)
		}
		// The account verified it, the provider did not: a new account is not made either (the
		// email is taken), and the victim's account is untouched.
		acc := register(t, app, "verified", "verified@corp.example", "correct horse battery")
		code := nextMailCode(t, srv, "verified@corp.example", "Confirm your email", accountCodePattern)
		app.call(t, "POST", "/api/user/email/verify", acc.Token, map[string]any{"user": map[string]any{"code": code}}).Expect(t, http.StatusOK)
		u2 := e.user(t, testenv.OIDCUser{Username: "trudy", Subject: "sub-trudy", Email: "verified@corp.example", EmailVerified: false})
		if q := e.signIn(t, u2.Username, u2.Password); q.Get("error") != "email_in_use" {
			t.Fatalf("front end got %v, want error=email_in_use", q)
		}
		if n := app.pgCount(t, `SELECT count(*) FROM user_identities WHERE subject IN ('sub-mallory', 'sub-trudy')`); n != 0 {
			t.Fatal("an unverified email linked an identity")
		}
		// An unverified email nobody has: a new account with that email, unverified, and the
		// verification mail registration sends.
		u3 := e.user(t, testenv.OIDCUser{Username: "newbie", Subject: "sub-newbie", Email: "newbie@corp.example", EmailVerified: false, Name: "New Bie"})
		me := e.signedIn(t, u3.Username, u3.Password)
		if me["username"] != "New_Bie" {
			t.Fatalf("new account %v, want the username from the name", me)
		}
		nextMailCode(t, srv, "newbie@corp.example", "Confirm your email", accountCodePattern)
	})

	t.Run("username made unique", func(t *testing.T) {
		register(t, app, "dup", "dup-owner@corp.example", "correct horse battery")
		nextMailCode(t, srv, "dup-owner@corp.example", "Confirm your email", accountCodePattern)
		u := e.user(t, testenv.OIDCUser{Username: "dup", Subject: "sub-dup", Email: "dup@corp.example", EmailVerified: true, PreferredUsername: "dup"})
		if me := e.signedIn(t, u.Username, u.Password); me["username"] != "dup2" {
			t.Fatalf("username %v, want dup2", me["username"])
		}
	})

	t.Run("no email", func(t *testing.T) {
		u := e.user(t, testenv.OIDCUser{Username: "anon", Subject: "sub-anon"})
		if q := e.signIn(t, u.Username, u.Password); q.Get("error") != "email_required" {
			t.Fatalf("front end got %v, want error=email_required", q)
		}
	})

	t.Run("the provider's error parameter", func(t *testing.T) {
		authorize, cookie2 := e.start(t, oidcFrontEnd+"/signed-in")
		state := mustQuery(t, authorize).Get("state")
		q := frontEnd(t, e.callback(t, oidcPublicURL+"/api/auth/oidc/corp/callback?error=access_denied&state="+url.QueryEscape(state), cookie2))
		if q.Get("error") != "provider_error" {
			t.Fatalf("front end got %v", q)
		}
	})

	t.Run("bad states are 400", func(t *testing.T) {
		u := e.user(t, testenv.OIDCUser{Username: "replayer", Subject: "sub-replayer", Email: "replayer@corp.example", EmailVerified: true})
		authorize, cookie := e.start(t, oidcFrontEnd+"/signed-in")
		back := e.op.SignIn(t, e.noFollow, authorize, u.Username, u.Password)
		// Without the cookie, or with another browser's: 400, and the state survives for its own browser.
		_, other := e.start(t, oidcFrontEnd+"/signed-in")
		requireErrorField(t, e.callback(t, back, ""), http.StatusBadRequest, "state")
		requireErrorField(t, e.callback(t, back, other), http.StatusBadRequest, "state")
		q := frontEnd(t, e.callback(t, back, cookie))
		if q.Get("code") == "" {
			t.Fatalf("front end got %v", q)
		}
		// Replayed: 400.
		requireErrorField(t, e.callback(t, back, cookie), http.StatusBadRequest, "state")
		// Forged.
		requireErrorField(t, e.callback(t, oidcPublicURL+"/api/auth/oidc/corp/callback?state=forged&code=x", cookie), http.StatusBadRequest, "state")
		// Expired: a state past its 10 minutes (moved back in time in the table).
		authorize, cookie = e.start(t, oidcFrontEnd+"/signed-in")
		if _, err := app.DB.Pool.Exec(context.Background(), `UPDATE sign_in_states SET expires_at = now() - interval '1 second'`); err != nil {
			t.Fatal(err)
		}
		back = e.op.SignIn(t, e.noFollow, authorize, u.Username, u.Password)
		requireErrorField(t, e.callback(t, back, cookie), http.StatusBadRequest, "state")
	})

	t.Run("exchange code older than 60 s", func(t *testing.T) {
		u := e.user(t, testenv.OIDCUser{Username: "slow", Subject: "sub-slow", Email: "slow@corp.example", EmailVerified: true})
		q := e.signIn(t, u.Username, u.Password)
		if n := app.pgCount(t, `SELECT count(*) FROM sign_in_codes WHERE expires_at <= created_at + interval '60 seconds'`); n < 1 {
			t.Fatal("an exchange code lives longer than 60 s")
		}
		if _, err := app.DB.Pool.Exec(context.Background(), `UPDATE sign_in_codes SET expires_at = now() - interval '1 second'`); err != nil {
			t.Fatal(err)
		}
		requireErrorField(t, e.exchange(t, q.Get("code")), http.StatusUnprocessableEntity, "code")
	})

	t.Run("redirect outside the allow-list, unknown provider", func(t *testing.T) {
		for _, r := range []string{"https://evil.example/signed-in", "javascript:alert(1)", "//evil.example", "https://app.example.evil.example/", ""} {
			res, err := app.fetch(e.noFollow, "GET", "/api/auth/oidc/corp/start?redirect="+url.QueryEscape(r), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			requireErrorField(t, res, http.StatusUnprocessableEntity, "redirect")
		}
		res, err := app.fetch(e.noFollow, "GET", "/api/auth/oidc/nope/start?redirect="+url.QueryEscape(oidcFrontEnd), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		requireErrorField(t, res, http.StatusNotFound, "provider")
	})
}

// TestOIDC_TokenChecks: the ID token's checks, each an error redirect once the state is valid.
func TestOIDC_TokenChecks(t *testing.T) {
	parallel(t)
	e := startOIDC(t)
	u := e.user(t, testenv.OIDCUser{Username: "tok", Subject: "sub-tok", Email: "tok@corp.example", EmailVerified: true})
	for _, c := range []struct {
		name  string
		tweak testenv.TokenTweak
		want  string
	}{
		{"wrong audience", testenv.TokenTweak{Audience: "someone-else"}, "invalid_token"},
		{"expired", testenv.TokenTweak{Expired: true}, "invalid_token"},
		{"nonce mismatch", testenv.TokenTweak{Nonce: "not-this-sign-in"}, "nonce_mismatch"},
	} {
		e.op.NextToken(t, oidcClientID, c.tweak)
		if q := e.signIn(t, u.Username, u.Password); q.Get("error") != c.want {
			t.Errorf("%s: front end got %v, want error=%s", c.name, q, c.want)
		}
	}
	// Key rotation: tokens signed with the new key verify (the JWKS is fetched again).
	e.signedIn(t, u.Username, u.Password)
	e.op.RotateKeys(t)
	e.signedIn(t, u.Username, u.Password)
	e.op.RotateKeys(t)
	e.signedIn(t, u.Username, u.Password)
	// A replayed provider code: the state is new, the code spent at the provider.
	authorize, cookie := e.start(t, oidcFrontEnd+"/signed-in")
	back := e.op.SignIn(t, e.noFollow, authorize, u.Username, u.Password)
	frontEnd(t, e.callback(t, back, cookie))
	authorize2, cookie2 := e.start(t, oidcFrontEnd+"/signed-in")
	replay := mustQuery(t, back)
	replay.Set("state", mustQuery(t, authorize2).Get("state"))
	q := frontEnd(t, e.callback(t, oidcPublicURL+"/api/auth/oidc/corp/callback?"+replay.Encode(), cookie2))
	if q.Get("error") != "exchange_failed" {
		t.Fatalf("replayed provider code: front end got %v", q)
	}
}

// TestOIDC_Accounts: unlink rules, linking while signed in, suspension.
func TestOIDC_Accounts(t *testing.T) {
	parallel(t)
	e := startOIDC(t)
	app := e.app
	u := e.user(t, testenv.OIDCUser{Username: "solo", Subject: "sub-solo", Email: "solo@corp.example", EmailVerified: true})
	me := e.signedIn(t, u.Username, u.Password)
	token := me["token"].(string)
	ids := app.call(t, "GET", "/api/user/identities", token, nil).Expect(t, http.StatusOK).JSON(t)["identities"].([]any)
	id := strconv.FormatInt(int64(ids[0].(map[string]any)["id"].(float64)), 10)
	// The provider made the account: no password its owner set, so its only identity stays.
	requireErrorField(t, app.call(t, "DELETE", "/api/user/identities/"+id, token, nil), http.StatusUnprocessableEntity, "identity")
	app.call(t, "DELETE", "/api/user/identities/999999", token, nil).Expect(t, http.StatusNotFound)

	// Linking while signed in: the step-up, then the provider.
	acc := register(t, app, "linker", "linker@example.com", "correct horse battery")
	other := e.user(t, testenv.OIDCUser{Username: "linked", Subject: "sub-linked", Email: "someone-else@corp.example", EmailVerified: true})
	res := app.call(t, "POST", "/api/auth/oidc/corp/start", acc.Token, map[string]any{"redirect": oidcFrontEnd + "/signed-in", "password": "wrong password"})
	res.Expect(t, http.StatusForbidden)
	requireErrorField(t, app.call(t, "POST", "/api/auth/oidc/corp/start", acc.Token, map[string]any{"redirect": oidcFrontEnd + "/signed-in"}),
		http.StatusUnprocessableEntity, "currentPassword")
	res = app.call(t, "POST", "/api/auth/oidc/corp/start", acc.Token, map[string]any{"redirect": oidcFrontEnd + "/signed-in", "password": "correct horse battery"}).
		Expect(t, http.StatusOK)
	authorize := res.JSON(t)["authorizationUrl"].(string)
	cookie := ""
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == "inkwell_sign_in" {
			cookie = c.Value
		}
	}
	back := e.op.SignIn(t, e.noFollow, authorize, other.Username, other.Password)
	if q := frontEnd(t, e.callback(t, back, cookie)); q.Get("linked") != "corp" {
		t.Fatalf("link: front end got %v", q)
	}
	if me := e.signedIn(t, other.Username, other.Password); me["username"] != "linker" {
		t.Fatalf("the linked identity signs in %v", me)
	}
	// The identity solo holds cannot join linker.
	res = app.call(t, "POST", "/api/auth/oidc/corp/start", acc.Token, map[string]any{"redirect": oidcFrontEnd + "/signed-in", "password": "correct horse battery"}).
		Expect(t, http.StatusOK)
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == "inkwell_sign_in" {
			cookie = c.Value
		}
	}
	back = e.op.SignIn(t, e.noFollow, res.JSON(t)["authorizationUrl"].(string), u.Username, u.Password)
	if q := frontEnd(t, e.callback(t, back, cookie)); q.Get("error") != "identity_in_use" {
		t.Fatalf("front end got %v, want identity_in_use", q)
	}

	// A suspended account is refused at the callback.
	_, mod := app.staff(t, "oidc")
	soon := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	app.call(t, "POST", "/api/moderation/users/solo/suspend", mod, map[string]any{"reason": "spam", "until": soon}).Expect(t, http.StatusOK)
	if q := e.signIn(t, u.Username, u.Password); q.Get("error") != "account_suspended" {
		t.Fatalf("front end got %v, want account_suspended", q)
	}
}

// TestOIDC_Fleet: start on one instance, the callback on another, the exchange on a third.
func TestOIDC_Fleet(t *testing.T) {
	parallel(t)
	op := testenv.StartOIDCProvider(t)
	op.AddClient(t, oidcClientID, "s3cret", oidcPublicURL+"/api/auth/oidc/corp/callback")
	env := map[string]string{"INKWELL_OIDC_CORP_ISSUER": op.Issuer(), "INKWELL_OIDC_CORP_CLIENT_ID": oidcClientID, "INKWELL_OIDC_CORP_CLIENT_SECRET": "s3cret"}
	fleet := apptest.StartFleet(t, 3, func(c *ioc.Config) {
		c.Server.PublicURL, c.SignIn.Providers, c.SignIn.RedirectAllow = oidcPublicURL, "corp", oidcFrontEnd
		c.SignIn.Env = func(k string) string { return env[k] }
		c.Server.RateAuth = "0"
	})
	op.AddUser(t, testenv.OIDCUser{Username: "fleet", Password: "pw", Subject: "sub-fleet", Email: "fleet@corp.example", EmailVerified: true})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	one := &oidcEnv{app: &testApp{fleet.Fleet[0]}, op: op, noFollow: noFollow}
	two := &oidcEnv{app: &testApp{fleet.Fleet[1]}, op: op, noFollow: noFollow}
	three := &oidcEnv{app: &testApp{fleet.Fleet[2]}, op: op, noFollow: noFollow}
	for _, e := range []*oidcEnv{one, two, three} {
		testenv.WaitUntil(t, "the provider's discovery", func() bool {
			return strings.Contains(string(e.app.call(t, "GET", "/api/auth/providers", "", nil).Body), `"available":true`)
		})
	}
	authorize, cookie := one.start(t, oidcFrontEnd+"/signed-in")
	back := op.SignIn(t, noFollow, authorize, "fleet", "pw")
	q := frontEnd(t, two.callback(t, back, cookie))
	requireErrorField(t, one.callback(t, back, cookie), http.StatusBadRequest, "state") // spent on instance 2
	me := userOf(t, three.exchange(t, q.Get("code")).Expect(t, http.StatusOK))
	requireErrorField(t, one.exchange(t, q.Get("code")), http.StatusUnprocessableEntity, "code")
	one.app.call(t, "GET", "/api/user", me["token"].(string), nil).Expect(t, http.StatusOK)
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// TestOIDC_UnreachableIssuer: a provider whose issuer cannot be reached does not stop the server;
// it is listed unavailable, and a sign-in through it is a 503 saying so.
func TestOIDC_UnreachableIssuer(t *testing.T) {
	parallel(t)
	env := map[string]string{"INKWELL_OIDC_DOWN_ISSUER": "http://127.0.0.1:1", "INKWELL_OIDC_DOWN_CLIENT_ID": "inkwell"}
	app := startApp(t, func(c *ioc.Config) {
		c.Server.PublicURL, c.SignIn.Providers, c.SignIn.RedirectAllow = oidcPublicURL, "down", oidcFrontEnd
		c.SignIn.Env = func(k string) string { return env[k] }
	})
	list := app.call(t, "GET", "/api/auth/providers", "", nil).Expect(t, http.StatusOK).JSON(t)["providers"].([]any)
	if p := list[0].(map[string]any); p["name"] != "down" || p["available"] != false {
		t.Fatalf("providers %v", list)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	res, err := app.fetch(noFollow, "GET", "/api/auth/oidc/down/start?redirect="+url.QueryEscape(oidcFrontEnd+"/signed-in"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	requireErrorField(t, res, http.StatusServiceUnavailable, "provider")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
}
