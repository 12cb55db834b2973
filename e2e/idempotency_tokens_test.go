package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestKeyedRegistrationStoresNoToken: a registration sent with an Idempotency-Key leaves no token
// in idempotency_keys; a replay answers the same account with a session of its own, which works,
// and never hands back a token of the first answer (its refresh token was rotated before the
// replay); a replay whose password is no longer the account's signs nobody in.
func TestKeyedRegistrationStoresNoToken(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit)

	register := func(t *testing.T, name, key, password string) response {
		t.Helper()
		return app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{
			"username": name, "email": name + "@example.com", "password": password,
		}}, "Idempotency-Key", key)
	}
	storedBody := func(t *testing.T, key string) string {
		t.Helper()
		var body []byte
		if err := app.DB.Pool.QueryRow(context.Background(),
			`SELECT response_body FROM idempotency_keys WHERE scope LIKE 'ip:%' AND key = $1`, key).Scan(&body); err != nil {
			t.Fatalf("stored answer of %s: %v", key, err)
		}
		return string(body)
	}

	t.Run("the stored answer holds no token; a replay signs in anew", func(t *testing.T) {
		parallel(t)
		name, key := "keyed"+testenv.RandomID(5), "signup-"+testenv.RandomID(6)
		first := register(t, name, key, "correct horse battery").Expect(t, http.StatusCreated)
		requireFresh(t, first)
		u := userOf(t, first)
		original := session{Access: u["token"].(string), Refresh: u["refreshToken"].(string)}
		if original.Access == "" || original.Refresh == "" {
			t.Fatalf("first answer without tokens: %s", first.Body)
		}
		stored := storedBody(t, key)
		for _, secret := range []string{original.Access, original.Refresh} {
			if strings.Contains(stored, secret) {
				t.Fatalf("idempotency_keys holds a token of the session: %s", stored)
			}
		}
		if !strings.Contains(stored, name) {
			t.Fatalf("stored answer %s does not name the account", stored)
		}

		// The first session's refresh token is spent before the client retries.
		rotated := refreshOf(t, app.refresh(t, original.Refresh))

		again := register(t, name, key, "correct horse battery").Expect(t, http.StatusCreated)
		if h := again.Header.Get("Idempotent-Replayed"); h != "true" {
			t.Fatalf("Idempotent-Replayed = %q on a replay", h)
		}
		ru := userOf(t, again)
		replay := session{Access: ru["token"].(string)}
		replay.Refresh, _ = ru["refreshToken"].(string)
		if ru["username"] != name || replay.Access == "" || replay.Refresh == "" {
			t.Fatalf("replay answered %s", again.Body)
		}
		for _, old := range []string{original.Access, original.Refresh, rotated.Access, rotated.Refresh} {
			if replay.Access == old || replay.Refresh == old {
				t.Fatalf("the replay handed back a token of an earlier answer: %s", again.Body)
			}
		}
		if n := app.pgCount(t, `SELECT count(*) FROM users WHERE username = $1`, name); n != 1 {
			t.Fatalf("%d users named %s, want 1", n, name)
		}
		// The replay's session works, both its access token and its refresh token.
		if me := userOf(t, app.call(t, "GET", "/api/user", replay.Access, nil).Expect(t, http.StatusOK)); me["username"] != name {
			t.Fatalf("the replay's token is %v's", me["username"])
		}
		refreshOf(t, app.refresh(t, replay.Refresh))
		// The rotated refresh token stays spent.
		requireRefreshRefused(t, app.refresh(t, original.Refresh))
		if stored2 := storedBody(t, key); strings.Contains(stored2, replay.Access) || strings.Contains(stored2, replay.Refresh) {
			t.Fatalf("the replay's tokens were stored: %s", stored2)
		}
	})

	t.Run("a replay after a password change signs nobody in", func(t *testing.T) {
		parallel(t)
		name, key := "keyed"+testenv.RandomID(5), "signup-"+testenv.RandomID(6)
		first := register(t, name, key, "correct horse battery").Expect(t, http.StatusCreated)
		token := userOf(t, first)["token"].(string)
		app.call(t, "PUT", "/api/user", token, map[string]any{"user": map[string]any{
			"password": "another horse entirely", "currentPassword": "correct horse battery",
		}}).Expect(t, http.StatusOK)
		again := register(t, name, key, "correct horse battery")
		again.Expect(t, http.StatusUnauthorized)
		if strings.Contains(string(again.Body), `"token"`) {
			t.Fatalf("a replay with the old password answered a token: %s", again.Body)
		}
	})
}
