package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// codeOf reads the code the app stored for a target ("email:<addr>" or "phone:<number>") from
// Redis, and checks that the send_code job delivered that very code (through the LogSender).
func (a *testApp) codeOf(target string) string {
	a.T.Helper()
	rdb := testenv.NewRedis(a.T).Client
	code, err := rdb.Get(context.Background(), a.Cfg.RedisPrefix+"code:{"+target+"}").Result()
	if err != nil {
		a.T.Fatalf("no code stored for %s: %v", target, err)
	}
	channel, address, _ := strings.Cut(target, ":")
	a.waitFor("the send_code job for "+target+" is done", func() bool {
		var n int64
		err := a.DB.Pool.QueryRow(context.Background(), `
			SELECT count(*) FROM jobs WHERE kind = 'send_code' AND status = 'done'
			  AND payload->>'channel' = $1 AND payload->>'address' = $2 AND payload->>'code' = $3`,
			channel, address, code).Scan(&n)
		return err == nil && n == 1
	})
	return code
}

// waitFor polls cond until it holds, for what the app's background workers are about to do.
func (a *testApp) waitFor(what string, cond func() bool) {
	a.T.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			a.T.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCodeLoginJourney(t *testing.T) {
	t.Parallel()
	app := startApp(t)

	// Ask for a code: accepted, and a second ask within the minute is refused with Retry-After.
	sent := app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "  New.Reader@Example.com"}).Expect(t, http.StatusAccepted).JSON(t)
	if sent["sent"] != true {
		t.Fatalf("send answered %v", sent)
	}
	again := app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "new.reader@example.com"}).Expect(t, http.StatusTooManyRequests)
	if again.Header.Get("Retry-After") != "60" {
		t.Fatalf("Retry-After %q, want 60", again.Header.Get("Retry-After"))
	}
	if _, ok := errorsOf(t, again)["code"]; !ok {
		t.Fatalf("too-soon error %s", again.Body)
	}
	code := app.codeOf("email:new.reader@example.com")

	// A wrong code is 401 with attempts left; the right one logs in, creating the account.
	wrong := "000000"
	if code == wrong {
		wrong = "000001"
	}
	bad := app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "new.reader@example.com", "code": wrong}).Expect(t, http.StatusUnauthorized)
	if msg, _ := errorsOf(t, bad)["code"].([]any); len(msg) != 1 || !strings.Contains(msg[0].(string), "2 attempt") {
		t.Fatalf("wrong-code error %s", bad.Body)
	}
	user := app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "New.Reader@example.com", "code": code}).
		Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	token, _ := user["token"].(string)
	if user["email"] != "new.reader@example.com" || token == "" || !strings.HasPrefix(user["username"].(string), "user_") {
		t.Fatalf("code login user %v", user)
	}
	me := app.Do("GET", "/api/user", token, nil).Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	if me["email"] != "new.reader@example.com" {
		t.Fatalf("the token is for %v", me)
	}
	// The code is spent.
	app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "new.reader@example.com", "code": code}).Expect(t, http.StatusUnauthorized)

	// Once the resend interval has passed (the keys dropped here), a new code logs into the same account.
	rdb := testenv.NewRedis(t).Client
	if err := rdb.Del(context.Background(), app.Cfg.RedisPrefix+"code:{email:new.reader@example.com}",
		app.Cfg.RedisPrefix+"code:{email:new.reader@example.com}:attempts").Err(); err != nil {
		t.Fatal(err)
	}
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"user": map[string]any{"email": "new.reader@example.com"}}).Expect(t, http.StatusAccepted)
	code2 := app.codeOf("email:new.reader@example.com")
	again2 := app.Do("POST", "/api/users/login/code", "", map[string]any{"user": map[string]any{"email": "new.reader@example.com", "code": code2}}).
		Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	if again2["username"] != user["username"] {
		t.Fatalf("second login landed in %v, want %v", again2["username"], user["username"])
	}
	var accounts int64
	if err := app.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM users WHERE email = 'new.reader@example.com'`).Scan(&accounts); err != nil || accounts != 1 {
		t.Fatalf("%d accounts (err %v), want 1", accounts, err)
	}

	// A phone works the same way; its account gets a placeholder email.
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"phone": "+49 151 23456789"}).Expect(t, http.StatusAccepted)
	phoneCode := app.codeOf("phone:+4915123456789")
	phoneUser := app.Do("POST", "/api/users/login/code", "", map[string]any{"phone": "+4915123456789", "code": phoneCode}).
		Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	if !strings.HasSuffix(phoneUser["email"].(string), "@phone.invalid") || phoneUser["token"] == "" {
		t.Fatalf("phone user %v", phoneUser)
	}

	// Nothing was sent for anybody else: one send_code job per accepted ask.
	var jobs int64
	if err := app.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE kind = 'send_code'`).Scan(&jobs); err != nil || jobs != 3 {
		t.Fatalf("%d send_code jobs (err %v), want 3", jobs, err)
	}
}

func TestCodeLoginRefusals(t *testing.T) {
	t.Parallel()
	app := startApp(t)
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		field  string
	}{
		{"send_bad_email", "/send", map[string]any{"email": "not-an-email"}, http.StatusUnprocessableEntity, "email"},
		{"send_bad_phone", "/send", map[string]any{"phone": "0151-1234"}, http.StatusUnprocessableEntity, "phone"},
		{"send_both", "/send", map[string]any{"email": "a@example.com", "phone": "+4915112345678"}, http.StatusUnprocessableEntity, "body"},
		{"send_neither", "/send", map[string]any{}, http.StatusUnprocessableEntity, "body"},
		{"send_not_json", "/send", "email=a@example.com", http.StatusUnprocessableEntity, ""},
		{"login_bad_email", "", map[string]any{"email": "nope", "code": "123456"}, http.StatusUnprocessableEntity, "email"},
		{"login_both", "", map[string]any{"email": "a@example.com", "phone": "+4915112345678", "code": "123456"}, http.StatusUnprocessableEntity, "body"},
		{"login_malformed_code", "", map[string]any{"email": "a@example.com", "code": "12ab"}, http.StatusUnprocessableEntity, "code"},
		{"login_never_sent", "", map[string]any{"email": "ghost@example.com", "code": "123456"}, http.StatusUnauthorized, "code"},
	}
	t.Run("refused", func(t *testing.T) { // returns once its parallel subtests are done
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				res := app.Do("POST", "/api/users/login/code"+tc.path, "", tc.body).Expect(t, tc.status)
				errs := errorsOf(t, res)
				if _, ok := errs[tc.field]; tc.field != "" && !ok {
					t.Fatalf("errors %v lack %q", errs, tc.field)
				}
			})
		}
	})
	var jobs int64
	if err := app.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs`).Scan(&jobs); err != nil || jobs != 0 {
		t.Fatalf("%d jobs queued by refused requests (err %v)", jobs, err)
	}
}
