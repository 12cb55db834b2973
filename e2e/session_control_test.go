package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestSessionControl: a user lists and ends sessions, logs out everywhere, and a credential
// change needs the current password and ends every other session and every API key.
func TestSessionControl(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit)

	t.Run("list marks the current session and names its client; ending one refuses it at once", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		phone := app.call(t, "POST", "/api/users/login", "", map[string]any{"user": map[string]any{"email": acc.Email, "password": acc.Password}},
			"User-Agent", "inkwell-phone/1.0").Expect(t, http.StatusOK)
		phoneToken := userOf(t, phone)["token"].(string)
		phoneRefresh := userOf(t, phone)["refreshToken"].(string)

		list := app.call(t, "GET", "/api/user/sessions", acc.Token, nil).Expect(t, http.StatusOK).JSON(t)["sessions"].([]any)
		if len(list) != 2 {
			t.Fatalf("sessions %v, want 2", list)
		}
		var phoneID string
		current := 0
		for _, it := range list {
			s := it.(map[string]any)
			if s["current"] == true {
				current++
			}
			if s["userAgent"] == "inkwell-phone/1.0" {
				phoneID = s["id"].(string)
			}
		}
		if current != 1 || phoneID == "" {
			t.Fatalf("sessions %v: want one current and the phone's user agent", list)
		}

		stranger := signUp(t, app, accountOpts{})
		app.call(t, "DELETE", "/api/user/sessions/"+phoneID, stranger.Token, nil).Expect(t, http.StatusNotFound)
		app.call(t, "GET", "/api/user", phoneToken, nil).Expect(t, http.StatusOK)

		app.call(t, "DELETE", "/api/user/sessions/"+phoneID, acc.Token, nil).Expect(t, http.StatusNoContent)
		requireErrorField(t, app.call(t, "GET", "/api/user", phoneToken, nil), http.StatusUnauthorized, "token")
		requireRefreshRefused(t, app.refresh(t, phoneRefresh))
		app.call(t, "GET", "/api/user", acc.Token, nil).Expect(t, http.StatusOK)
	})

	t.Run("logout all ends every session and refresh token", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		others := []session{logIn(t, app, acc), logIn(t, app, acc), logIn(t, app, acc)}
		app.call(t, "POST", "/api/users/logout", acc.Token, map[string]any{"all": true}).Expect(t, http.StatusNoContent)
		for _, s := range append(others, acc.session()) {
			requireErrorField(t, app.call(t, "GET", "/api/user", s.Access, nil), http.StatusUnauthorized, "token")
			requireRefreshRefused(t, app.refresh(t, s.Refresh))
		}
	})

	t.Run("a password change needs the current password and ends every other session and every key", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		other := logIn(t, app, acc)
		key := app.call(t, "POST", "/api/user/api-keys", acc.Token, map[string]any{"apiKey": map[string]any{"name": "ci"}}).
			Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)["key"].(string)

		change := func(extra map[string]any) response {
			u := map[string]any{"password": "a brand new password"}
			for k, v := range extra {
				u[k] = v
			}
			return app.call(t, "PUT", "/api/user", acc.Token, map[string]any{"user": u})
		}
		requireErrorField(t, change(nil), http.StatusUnprocessableEntity, "currentPassword")
		requireErrorField(t, change(map[string]any{"currentPassword": "not it"}), http.StatusForbidden, "currentPassword")
		requireErrorField(t, app.call(t, "PUT", "/api/user", acc.Token, map[string]any{"user": map[string]any{"email": "new-" + acc.Email}}),
			http.StatusUnprocessableEntity, "currentPassword")
		// Nothing was changed by the refusals.
		app.call(t, "GET", "/api/user", other.Access, nil).Expect(t, http.StatusOK)
		logIn(t, app, acc)

		change(map[string]any{"currentPassword": acc.Password}).Expect(t, http.StatusOK)
		app.call(t, "GET", "/api/user", acc.Token, nil).Expect(t, http.StatusOK) // the current session stays
		requireErrorField(t, app.call(t, "GET", "/api/user", other.Access, nil), http.StatusUnauthorized, "token")
		requireRefreshRefused(t, app.refresh(t, other.Refresh))
		requireErrorField(t, app.call(t, "GET", "/api/user", key, nil), http.StatusUnauthorized, "token")
	})
}

// A logged-out token cannot come back near its expiry: its revocation mark outlives the token's
// lifetime plus the 5 s of clock skew the token check allows (it lived exactly the lifetime).
func TestSessionControl_MarkOutlivesToken(t *testing.T) {
	parallel(t)
	const verifySkew = 5 * time.Second
	app := startApp(t, noAuthLimit)
	acc := signUp(t, app, accountOpts{})
	app.call(t, "POST", "/api/users/logout", acc.Token, nil).Expect(t, http.StatusNoContent)
	left := testenv.NewRedis(t).Client.PTTL(t.Context(), revocationMarkKey(t, app.Cfg.Redis.Prefix, acc.Token)).Val()
	if lifetime := app.Cfg.Auth.JWTLifetime; left <= lifetime+verifySkew {
		t.Fatalf("the revocation mark lives %s more; the token is accepted for up to %s", left, lifetime+verifySkew)
	}
}

// Concurrent credential changes that rest on one current password, from several sessions of the
// user: exactly one wins, the others are refused (their password is no longer the account's, or
// their session was ended by the winner), and the account ends with the winner's password.
func TestSessionControl_ConcurrentPasswordChanges(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit)
	acc := signUp(t, app, accountOpts{})
	const n = 6
	sessions := []session{acc.session()}
	for len(sessions) < n {
		sessions = append(sessions, logIn(t, app, acc))
	}
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := app.fetch(http.DefaultClient, "PUT", "/api/user", s.Access, map[string]any{"user": map[string]any{
				"password": fmt.Sprintf("new password number %d", i), "currentPassword": acc.Password,
			}})
			if err != nil {
				t.Error(err)
				return
			}
			statuses[i] = res.Status
		}()
	}
	wg.Wait()
	winner := -1
	for i, st := range statuses {
		switch st {
		case http.StatusOK:
			if winner >= 0 {
				t.Fatalf("sessions %d and %d both changed the password: %v", winner, i, statuses)
			}
			winner = i
		case http.StatusForbidden, http.StatusUnauthorized:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	if winner < 0 {
		t.Fatalf("no change won: %v", statuses)
	}
	logIn(t, app, account{Email: acc.Email, Password: fmt.Sprintf("new password number %d", winner)})
	for i, s := range sessions {
		want := http.StatusUnauthorized
		if i == winner {
			want = http.StatusOK
		}
		app.call(t, "GET", "/api/user", s.Access, nil).Expect(t, want)
	}
}

// A code-login account has a random password nobody knows: it cannot change its credentials
// with PUT /api/user by any current password (403), but a step-up code sent to its own address
// stands in for it; a wrong one is 403 on code, and other edits need neither. Step-up codes have
// their own key and resend interval: a sign-in code is no step-up code, and a sign-in code sent a
// moment ago does not hold a step-up code back.
func TestSessionControl_CodeOnlyAccount(t *testing.T) {
	parallel(t)
	app, inbox := startCodeApp(t, noAuthLimit)
	email := "code-only." + strings.ToLower(testenv.RandomID(6)) + "@example.com"
	app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": email}).Expect(t, http.StatusAccepted)
	code := app.codeOf(inbox, "email:"+email)
	token := userOf(t, app.call(t, "POST", "/api/users/login/code", "", map[string]any{"email": email, "code": code}).
		Expect(t, http.StatusOK))["token"].(string)
	requireErrorField(t, app.call(t, "PUT", "/api/user", token, map[string]any{"user": map[string]any{"password": "my own password", "currentPassword": "anything"}}),
		http.StatusForbidden, "currentPassword")
	app.call(t, "PUT", "/api/user", token, map[string]any{"user": map[string]any{"bio": "still mine"}}).Expect(t, http.StatusOK)
	requireErrorField(t, app.call(t, "PUT", "/api/user", token, map[string]any{"user": map[string]any{"password": "my own password", "code": "000000"}}),
		http.StatusForbidden, "code")

	// A sign-in code, fresh and unused, is not a step-up code. (Its key is dropped first, as at
	// the end of its resend window.)
	rdb := testenv.NewRedis(t).Client
	if err := rdb.Del(t.Context(), app.Cfg.Redis.Prefix+"logincode:{email:"+email+"}").Err(); err != nil {
		t.Fatal(err)
	}
	app.call(t, "POST", "/api/users/login/code/send", "", map[string]any{"email": email}).Expect(t, http.StatusAccepted)
	signIn := app.codeOf(inbox, "email:"+email)
	requireErrorField(t, app.call(t, "PUT", "/api/user", token, map[string]any{"user": map[string]any{"password": "my own password", "code": signIn}}),
		http.StatusForbidden, "code")

	// A step-up code, sent right after that sign-in code (its resend interval is its own) to the
	// account's own address, proves the user is at the keyboard; the sign-in code still works.
	app.call(t, "POST", "/api/user/step-up/code", token, nil).Expect(t, http.StatusAccepted)
	app.call(t, "POST", "/api/user/step-up/code", token, nil).Expect(t, http.StatusTooManyRequests)
	stepUp := app.codeOf(inbox, "stepup:email:"+email)
	app.call(t, "PUT", "/api/user", token, map[string]any{"user": map[string]any{"password": "my own password", "code": stepUp}}).Expect(t, http.StatusOK)
	app.call(t, "POST", "/api/users/login", "", map[string]any{"user": map[string]any{"email": email, "password": "my own password"}}).Expect(t, http.StatusOK)
	app.call(t, "GET", "/api/user", token, nil).Expect(t, http.StatusOK) // the calling session stays
	// The code is spent: it cannot be used again.
	requireErrorField(t, app.call(t, "PUT", "/api/user", token, map[string]any{"user": map[string]any{"password": "another password", "code": stepUp}}),
		http.StatusForbidden, "code")
	app.call(t, "POST", "/api/users/login/code", "", map[string]any{"email": email, "code": signIn}).Expect(t, http.StatusOK)
}

// TestAPIKeyLimits: keys never manage the account, read keys only read, a key is never echoed
// as token, and the cap of 20 holds under 50 concurrent creates.
func TestAPIKeyLimits(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit)
	acc := signUp(t, app, accountOpts{})
	newKey := func(t *testing.T, scopes ...string) string {
		t.Helper()
		body := map[string]any{"name": "k"}
		if scopes != nil {
			body["scopes"] = scopes
		}
		return app.call(t, "POST", "/api/user/api-keys", acc.Token, map[string]any{"apiKey": body}).
			Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)["key"].(string)
	}
	writeKey, readKey := newKey(t), newKey(t, "read")

	t.Run("no key manages the account", func(t *testing.T) {
		for _, k := range []string{writeKey, readKey} {
			for _, r := range []struct {
				method, path string
				body         any
			}{
				{"PUT", "/api/user", map[string]any{"user": map[string]any{"password": "taken over!!", "email": "evil@example.com"}}},
				{"PUT", "/api/user", map[string]any{"user": map[string]any{"bio": "x"}}},
				{"POST", "/api/user/api-keys", map[string]any{"apiKey": map[string]any{"name": "more"}}},
				{"GET", "/api/user/api-keys", nil},
				{"DELETE", "/api/user/api-keys/1", nil},
				{"GET", "/api/user/sessions", nil},
				{"DELETE", "/api/user/sessions/x", nil},
				{"POST", "/api/users/logout", map[string]any{"all": true}},
			} {
				requireErrorField(t, app.call(t, r.method, r.path, k, r.body), http.StatusForbidden, "token")
			}
		}
		logIn(t, app, acc) // the password did not change
	})

	t.Run("a read key only reads; a write key writes", func(t *testing.T) {
		app.call(t, "GET", "/api/articles/feed", readKey, nil).Expect(t, http.StatusOK)
		requireErrorField(t, app.call(t, "POST", "/api/articles", readKey, newArticle("read key")), http.StatusForbidden, "token")
		app.call(t, "POST", "/api/articles", writeKey, newArticle("write key")).Expect(t, http.StatusCreated)
	})

	t.Run("an empty scope list is 422, not a write key; absent or null is the default", func(t *testing.T) {
		requireErrorField(t, app.call(t, "POST", "/api/user/api-keys", acc.Token,
			map[string]any{"apiKey": map[string]any{"name": "none", "scopes": []string{}}}), http.StatusUnprocessableEntity, "scopes")
		for _, list := range app.call(t, "GET", "/api/user/api-keys", acc.Token, nil).Expect(t, http.StatusOK).JSON(t)["apiKeys"].([]any) {
			if list.(map[string]any)["name"] == "none" {
				t.Fatal("the refused key was stored")
			}
		}
		null := app.call(t, "POST", "/api/user/api-keys", acc.Token, map[string]any{"apiKey": map[string]any{"name": "null", "scopes": nil}}).
			Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)
		if fmt.Sprint(null["scopes"]) != "[write]" {
			t.Fatalf("scopes null made a key with scopes %v, want [write]", null["scopes"])
		}
	})

	t.Run("a key is never echoed as token", func(t *testing.T) {
		u := userOf(t, app.call(t, "GET", "/api/user", writeKey, nil).Expect(t, http.StatusOK))
		if u["token"] != "" {
			t.Fatalf("GET /api/user with a key answered token %q", u["token"])
		}
		if u := userOf(t, app.call(t, "GET", "/api/user", acc.Token, nil).Expect(t, http.StatusOK)); u["token"] != acc.Token {
			t.Fatalf("GET /api/user with a session answered token %q", u["token"])
		}
	})

	t.Run("the cap holds under concurrency", func(t *testing.T) {
		capped := signUp(t, app, accountOpts{})
		var wg sync.WaitGroup
		statuses := make(chan int, 50)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := app.fetch(http.DefaultClient, "POST", "/api/user/api-keys", capped.Token,
					map[string]any{"apiKey": map[string]any{"name": fmt.Sprint("k", i)}})
				if err != nil {
					t.Error(err)
					return
				}
				statuses <- res.Status
			}()
		}
		wg.Wait()
		close(statuses)
		created := 0
		for st := range statuses {
			switch st {
			case http.StatusCreated:
				created++
			case http.StatusUnprocessableEntity:
			default:
				t.Errorf("status %d", st)
			}
		}
		if n := app.pgCount(t, `SELECT count(*) FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL`, app.userID(t, capped.Username)); created != 20 || n != 20 {
			t.Fatalf("created %d, stored %d; want exactly 20", created, n)
		}
	})
}

// A user holds at most INKWELL_SESSIONS_PER_USER live sessions: a login past it ends the least
// recently used (refreshed) one, on every instance before the login is answered, as a logout
// would; the others, the refreshed old one included, keep working.
func TestSessionControl_PerUserCap(t *testing.T) {
	parallel(t)
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	tweak := func(c *ioc.Config) { noAuthLimit(c); c.Auth.SessionsPerUser = 3 }
	a, b := startReplica(t, db, rds.Prefix, tweak), startReplica(t, db, rds.Prefix, tweak)

	acc := signUp(t, a, accountOpts{}) // registration opens the first session
	second := logIn(t, b, acc)
	third := logIn(t, a, acc)
	first := refreshOf(t, b.refresh(t, acc.Refresh)) // the oldest, now the most recently used
	fourth := logIn(t, a, acc)                       // one past the cap: ends the second

	requireErrorField(t, b.call(t, "GET", "/api/user", second.Access, nil), http.StatusUnauthorized, "token")
	requireRefreshRefused(t, b.refresh(t, second.Refresh))
	for i, s := range []session{first, third, fourth} {
		for _, app := range []*testApp{a, b} {
			if r := app.call(t, "GET", "/api/user", s.Access, nil); r.Status != http.StatusOK {
				t.Fatalf("session %d refused after the cap ended another: %d %s", i, r.Status, r.Body)
			}
		}
	}
	if list := b.call(t, "GET", "/api/user/sessions", fourth.Access, nil).Expect(t, http.StatusOK).JSON(t)["sessions"].([]any); len(list) != 3 {
		t.Fatalf("%d sessions listed, want the cap of 3: %v", len(list), list)
	}
}
