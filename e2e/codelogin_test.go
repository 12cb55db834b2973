package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// codeInbox is the SMS/email gateway of a code-login test: the app's webhook sender posts every
// code here.
type codeInbox struct {
	mu    sync.Mutex
	codes map[string]chan string // by address
}

func (in *codeInbox) box(address string) chan string {
	// The tests' spellings of one address differ by ASCII case at most; anything else (ß and ss,
	// ς and σ, ı and i) is another mailbox, with a box of its own.
	address = strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, address)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.codes[address] == nil {
		in.codes[address] = make(chan string, 16)
	}
	return in.codes[address]
}

// next waits for the next code delivered to address.
func (in *codeInbox) next(t *testing.T, address string) string {
	t.Helper()
	select {
	case code := <-in.box(address):
		return code
	case <-time.After(20 * time.Second):
		t.Fatalf("no code delivered to %s", address)
		return ""
	}
}

// startCodeApp starts the app with its codes delivered to an inbox.
func startCodeApp(t *testing.T, tweak ...func(*ioc.Config)) (*testApp, *codeInbox) {
	t.Helper()
	in := &codeInbox{codes: map[string]chan string{}}
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Channel, To, Code string }
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		in.box(m.To) <- m.Code
	}))
	t.Cleanup(gateway.Close)
	return startApp(t, append([]func(*ioc.Config){func(c *ioc.Config) {
		c.Mail.CodeSender = gateway.URL
	}}, tweak...)...), in
}

// codeOf waits for the code delivered for target (a code store key: "email:…", "phone:…", or
// "stepup:email:…" for a step-up code), and checks that it is stored nowhere in plain text: Redis
// keeps its HMAC, and the send_code job (which carried it sealed) is deleted once done.
func (a *testApp) codeOf(in *codeInbox, target string) string {
	a.T.Helper()
	_, address, _ := strings.Cut(strings.TrimPrefix(target, "stepup:"), ":")
	code := in.next(a.T, address)
	rdb := testenv.NewRedis(a.T).Client
	stored, err := rdb.HGetAll(context.Background(), a.Cfg.Redis.Prefix+"logincode:{"+target+"}").Result()
	if err != nil || len(stored["h"]) != 64 {
		a.T.Fatalf("code key for %s holds %v (%v), want an HMAC-SHA256", target, stored, err)
	}
	for field, v := range stored {
		if field != "left" && field != "strong" && strings.Contains(v, code) {
			a.T.Fatalf("Redis holds the plain code in %s = %q", field, v)
		}
	}
	a.waitFor("the send_code job for "+target+" is deleted", func() bool {
		var n int64
		err := a.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE kind = 'send_code' AND lower(payload->>'address') = lower($1)`, address).Scan(&n)
		return err == nil && n == 0
	})
	var leaks int64
	if err := a.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE payload::text LIKE '%' || $1 || '%'`, code).Scan(&leaks); err != nil || leaks != 0 {
		a.T.Fatalf("%d job rows hold the plain code (err %v)", leaks, err)
	}
	return code
}

// waitFor polls cond until it holds, for what the app's background workers are about to do.
func (a *testApp) waitFor(what string, cond func() bool) {
	a.T.Helper()
	testenv.WaitUntil(a.T, what, cond)
}

func TestCodeLoginJourney(t *testing.T) {
	parallel(t)
	app, inbox := startCodeApp(t)

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
	code := app.codeOf(inbox, "email:new.reader@example.com")

	// A wrong code is 401 with a message that tells nothing; the right one logs in, creating the
	// account with the email as typed at that login.
	wrong := "000000"
	if code == wrong {
		wrong = "000001"
	}
	bad := app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "new.reader@example.com", "code": wrong}).Expect(t, http.StatusUnauthorized)
	if msg, _ := errorsOf(t, bad)["code"].([]any); len(msg) != 1 || msg[0] != "is invalid or has expired" {
		t.Fatalf("wrong-code error %s", bad.Body)
	}
	user := app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "New.Reader@example.com", "code": code}).
		Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	token, _ := user["token"].(string)
	if user["email"] != "New.Reader@example.com" || token == "" || !strings.HasPrefix(user["username"].(string), "user_") {
		t.Fatalf("code login user %v", user)
	}
	me := app.Do("GET", "/api/user", token, nil).Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	if me["email"] != "New.Reader@example.com" {
		t.Fatalf("the token is for %v", me)
	}
	// The code is spent, and its key keeps the resend interval: no new code right after a login.
	app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "new.reader@example.com", "code": code}).Expect(t, http.StatusUnauthorized)
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "new.reader@example.com"}).Expect(t, http.StatusTooManyRequests)

	// Once the resend interval has passed (the code key dropped here), a new code logs into the
	// same account.
	rdb := testenv.NewRedis(t).Client
	if err := rdb.Del(context.Background(), app.Cfg.Redis.Prefix+"logincode:{email:new.reader@example.com}").Err(); err != nil {
		t.Fatal(err)
	}
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"user": map[string]any{"email": "new.reader@example.com"}}).Expect(t, http.StatusAccepted)
	code2 := app.codeOf(inbox, "email:new.reader@example.com")
	again2 := app.Do("POST", "/api/users/login/code", "", map[string]any{"user": map[string]any{"email": "new.reader@example.com", "code": code2}}).
		Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	if again2["username"] != user["username"] {
		t.Fatalf("second login landed in %v, want %v", again2["username"], user["username"])
	}
	var accounts int64
	if err := app.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM users WHERE email_canonical = 'new.reader@example.com'`).Scan(&accounts); err != nil || accounts != 1 {
		t.Fatalf("%d accounts (err %v), want 1", accounts, err)
	}

	// A phone works the same way; its account gets a placeholder email.
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"phone": "+49 151 23456789"}).Expect(t, http.StatusAccepted)
	phoneCode := app.codeOf(inbox, "phone:+4915123456789")
	phoneUser := app.Do("POST", "/api/users/login/code", "", map[string]any{"phone": "+4915123456789", "code": phoneCode}).
		Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	if !strings.HasSuffix(phoneUser["email"].(string), "@phone.invalid") || phoneUser["token"] == "" {
		t.Fatalf("phone user %v", phoneUser)
	}

	// Every send_code job is gone once done.
	var jobs int64
	if err := app.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE kind = 'send_code'`).Scan(&jobs); err != nil || jobs != 0 {
		t.Fatalf("%d send_code jobs left (err %v), want 0", jobs, err)
	}
}

func TestCodeLoginRefusals(t *testing.T) {
	parallel(t)
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
				parallel(t)
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
