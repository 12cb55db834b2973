package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func userOf(t *testing.T, r response) map[string]any {
	t.Helper()
	u, ok := r.JSON(t)["user"].(map[string]any)
	if !ok {
		t.Fatalf("no user in %s", r.Body)
	}
	return u
}

func errorsOf(t *testing.T, r response) map[string]any {
	t.Helper()
	e, ok := r.JSON(t)["errors"].(map[string]any)
	if !ok || len(e) == 0 {
		t.Fatalf("no RealWorld errors object in %s", r.Body)
	}
	return e
}

func TestAccountsJourney(t *testing.T) {
	parallel(t)
	app := startApp(t)

	// Register: the email is stored as typed and matched canonically.
	reg := app.Do("POST", "/api/users", "", map[string]any{"user": map[string]any{
		"username": "Jake", "email": "Jake@Jake.jake", "password": "jakejakejake",
	}}).Expect(t, http.StatusCreated)
	u := userOf(t, reg)
	if u["email"] != "Jake@Jake.jake" || u["username"] != "Jake" || u["bio"] != "" || u["image"] != "" || u["token"] == "" {
		t.Fatalf("register answered %s", reg.Body)
	}

	// Login (email case-insensitive).
	login := app.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{
		"email": "JAKE@jake.jake", "password": "jakejakejake",
	}}).Expect(t, http.StatusOK)
	token := userOf(t, login)["token"].(string)

	// Current user, with both header schemes.
	cur := app.Do("GET", "/api/user", token, nil).Expect(t, http.StatusOK)
	if userOf(t, cur)["username"] != "Jake" || userOf(t, cur)["token"] != token {
		t.Fatalf("current user answered %s", cur.Body)
	}
	app.Do("GET", "/api/user", "", nil, "Authorization", "Bearer "+token).Expect(t, http.StatusOK)

	// Update: bio, image, username and password; the old password stops working.
	upd := app.Do("PUT", "/api/user", token, map[string]any{"user": map[string]any{
		"bio": "I like to skateboard", "image": "https://i.stack.imgur.com/xHWG8.jpg",
		"username": "jake2", "password": "newpassword1", "currentPassword": "jakejakejake",
	}}).Expect(t, http.StatusOK)
	if u := userOf(t, upd); u["bio"] != "I like to skateboard" || u["username"] != "jake2" || u["image"] != "https://i.stack.imgur.com/xHWG8.jpg" {
		t.Fatalf("update answered %s", upd.Body)
	}
	app.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{
		"email": "jake@jake.jake", "password": "jakejakejake",
	}}).Expect(t, http.StatusUnauthorized)
	app.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{
		"email": "jake@jake.jake", "password": "newpassword1",
	}}).Expect(t, http.StatusOK)
	// The cache was invalidated: the current user shows the new data.
	if u := userOf(t, app.Do("GET", "/api/user", token, nil).Expect(t, http.StatusOK)); u["username"] != "jake2" {
		t.Fatalf("stale current user: %v", u)
	}

	// Profiles: old username is gone, new one resolves (any case).
	app.Do("GET", "/api/profiles/Jake", "", nil).Expect(t, http.StatusNotFound)
	p := app.Do("GET", "/api/profiles/JAKE2", "", nil).Expect(t, http.StatusOK).JSON(t)["profile"].(map[string]any)
	if p["username"] != "jake2" || p["bio"] != "I like to skateboard" || p["following"] != false {
		t.Fatalf("profile answered %v", p)
	}

	// Follow and unfollow, both idempotent.
	other := app.Register("celeb")
	for range 2 {
		f := app.Do("POST", "/api/profiles/jake2/follow", other, nil).Expect(t, http.StatusOK).JSON(t)["profile"].(map[string]any)
		if f["following"] != true {
			t.Fatalf("follow answered %v", f)
		}
	}
	if f := app.Do("GET", "/api/profiles/jake2", other, nil).Expect(t, http.StatusOK).JSON(t)["profile"].(map[string]any); f["following"] != true {
		t.Fatalf("profile after follow: %v", f)
	}
	for range 2 {
		f := app.Do("DELETE", "/api/profiles/jake2/follow", other, nil).Expect(t, http.StatusOK).JSON(t)["profile"].(map[string]any)
		if f["following"] != false {
			t.Fatalf("unfollow answered %v", f)
		}
	}
	if f := app.Do("GET", "/api/profiles/jake2", other, nil).Expect(t, http.StatusOK).JSON(t)["profile"].(map[string]any); f["following"] != false {
		t.Fatalf("profile after unfollow: %v", f)
	}
	app.Do("POST", "/api/profiles/jake2/follow", token, nil).Expect(t, http.StatusUnprocessableEntity)
	app.Do("POST", "/api/profiles/nobody-here/follow", token, nil).Expect(t, http.StatusNotFound)
}

func TestAccountsBadInput(t *testing.T) {
	parallel(t)
	app := startApp(t)
	token := app.Register("existing")

	signWith := func(method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now()
	claims := func(mut func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": "inkwell", "sub": "1", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		mut(c)
		return c
	}
	expired := signWith(jwt.SigningMethodHS256, []byte(testJWTSecret), claims(func(c jwt.MapClaims) {
		c["iat"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
	}))
	algNone := signWith(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(func(jwt.MapClaims) {}))
	wrongKey := signWith(jwt.SigningMethodHS256, []byte("another-secret-another-secret-0123456789"), claims(func(jwt.MapClaims) {}))
	wrongIssuer := signWith(jwt.SigningMethodHS256, []byte(testJWTSecret), claims(func(c jwt.MapClaims) { c["iss"] = "someone-else" }))
	parts := strings.Split(token, ".")
	tampered := parts[0] + "." + strings.TrimRight(parts[1], "A") + "B." + parts[2]

	user := func(fields map[string]any) map[string]any { return map[string]any{"user": fields} }
	cases := []struct {
		name, method, path, token string
		body                      any
		headers                   []string
		status                    int
		field                     string // expected key in errors, "" to skip
	}{
		{"register missing fields", "POST", "/api/users", "", user(map[string]any{}), nil, 422, "email"},
		{"register missing username", "POST", "/api/users", "", user(map[string]any{"email": "a@b.co", "password": "longenough"}), nil, 422, "username"},
		{"register bad email", "POST", "/api/users", "", user(map[string]any{"username": "x1", "email": "not-an-email", "password": "longenough"}), nil, 422, "email"},
		{"register short password", "POST", "/api/users", "", user(map[string]any{"username": "x2", "email": "x2@b.co", "password": "short"}), nil, 422, "password"},
		{"register duplicate email", "POST", "/api/users", "", user(map[string]any{"username": "fresh", "email": "EXISTING@example.com", "password": "longenough"}), nil, 422, "email"},
		{"register duplicate username", "POST", "/api/users", "", user(map[string]any{"username": "Existing", "email": "fresh@example.com", "password": "longenough"}), nil, 422, "username"},
		{"register malformed JSON", "POST", "/api/users", "", `{"user": {"email": `, nil, 422, "body"},
		{"register wrong type", "POST", "/api/users", "", `{"user": {"email": 42}}`, nil, 422, "email"},
		{"register empty body", "POST", "/api/users", "", "", nil, 422, "body"},
		{"register oversize body", "POST", "/api/users", "", `{"user":{"bio":"` + strings.Repeat("a", 1<<20) + `"}}`, nil, 413, "body"},
		{"login wrong password", "POST", "/api/users/login", "", user(map[string]any{"email": "existing@example.com", "password": "wrong-password"}), nil, 401, ""},
		{"login unknown email", "POST", "/api/users/login", "", user(map[string]any{"email": "ghost@example.com", "password": "whatever1"}), nil, 401, ""},
		{"login missing password", "POST", "/api/users/login", "", user(map[string]any{"email": "existing@example.com"}), nil, 422, "password"},
		{"login malformed JSON", "POST", "/api/users/login", "", `nope`, nil, 422, "body"},
		{"current user without token", "GET", "/api/user", "", nil, nil, 401, "token"},
		{"current user garbled token", "GET", "/api/user", "garbage.token.here", nil, nil, 401, "token"},
		{"current user expired token", "GET", "/api/user", expired, nil, nil, 401, "token"},
		{"current user alg none", "GET", "/api/user", algNone, nil, nil, 401, "token"},
		{"current user wrong key", "GET", "/api/user", wrongKey, nil, nil, 401, "token"},
		{"current user wrong issuer", "GET", "/api/user", wrongIssuer, nil, nil, 401, "token"},
		{"current user tampered payload", "GET", "/api/user", tampered, nil, nil, 401, "token"},
		{"current user basic auth", "GET", "/api/user", "", nil, []string{"Authorization", "Basic dXNlcjpwYXNz"}, 401, "token"},
		{"update bad email", "PUT", "/api/user", token, user(map[string]any{"email": "nope"}), nil, 422, "email"},
		{"update bad image", "PUT", "/api/user", token, user(map[string]any{"image": "javascript:alert(1)"}), nil, 422, "image"},
		{"update malformed JSON", "PUT", "/api/user", token, `{"user":`, nil, 422, "body"},
		{"update without token", "PUT", "/api/user", "", user(map[string]any{"bio": "x"}), nil, 401, "token"},
		{"follow without token", "POST", "/api/profiles/existing/follow", "", nil, nil, 401, "token"},
		{"profile unknown", "GET", "/api/profiles/ghost", "", nil, nil, 404, "body"},
		{"unknown route", "GET", "/api/nothing-here", "", nil, nil, 404, "body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			res := app.Do(tc.method, tc.path, tc.token, tc.body, tc.headers...)
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d; body %s", res.Status, tc.status, res.Body)
			}
			errs := errorsOf(t, res)
			if tc.field != "" {
				if _, ok := errs[tc.field]; !ok {
					t.Fatalf("errors %v lack field %q", errs, tc.field)
				}
			}
		})
	}

	t.Run("no partial write on a rejected registration", func(t *testing.T) {
		parallel(t)
		app.Do("POST", "/api/users", "", user(map[string]any{"username": "partial", "email": "bad", "password": "longenough"})).Expect(t, 422)
		app.Do("GET", "/api/profiles/partial", "", nil).Expect(t, 404)
	})
	t.Run("token of a user id that does not exist", func(t *testing.T) {
		parallel(t)
		ghost := signWith(jwt.SigningMethodHS256, []byte(testJWTSecret), claims(func(c jwt.MapClaims) { c["sub"] = strconv.Itoa(1 << 40) }))
		app.Do("GET", "/api/user", ghost, nil).Expect(t, 401)
	})
}

func TestHealthz(t *testing.T) {
	parallel(t)
	app := startApp(t)
	app.Do("GET", "/healthz", "", nil).Expect(t, http.StatusOK)
}
