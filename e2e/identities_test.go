package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestCodeLoginFailureBudget: wrong guesses count per target across codes; once the budget is
// used up, six-digit codes for that target answer 429 with Retry-After, even the right one, and
// every wrong guess before that answered the same 401. The owner is not locked out: the next send
// is a strong code, which logs in whatever was guessed before it.
func TestCodeLoginFailureBudget(t *testing.T) {
	parallel(t)
	inProcess(t, "sets tuning constants through ioc.Config.Tune, which no setting carries to a process")
	app, inbox := startCodeApp(t, func(c *ioc.Config) { c.Tune.CodeFailureBudget, c.Tune.CodeAttempts = new(4), new(3) })
	rdb := testenv.NewRedis(t).Client
	target := map[string]any{"email": "victim@example.com"}
	guess := func(code string) response {
		return app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "victim@example.com", "code": code})
	}
	wrongFor := func(code string) string {
		if code == "000000" {
			return "000001"
		}
		return "000000"
	}
	app.Do("POST", "/api/users/login/code/send", "", target).Expect(t, http.StatusAccepted)
	first := app.codeOf(inbox, "email:victim@example.com")
	for range 3 { // burns the first code
		if msg := errorsOf(t, guess(wrongFor(first)).Expect(t, http.StatusUnauthorized))["code"].([]any); msg[0] != "is invalid or has expired" {
			t.Fatalf("wrong guess answered %v", msg)
		}
	}
	guess(first).Expect(t, http.StatusUnauthorized) // burned: the same answer
	if err := rdb.Del(context.Background(), app.Cfg.Redis.Prefix+"logincode:{email:victim@example.com}").Err(); err != nil {
		t.Fatal(err)
	}
	app.Do("POST", "/api/users/login/code/send", "", target).Expect(t, http.StatusAccepted)
	second := app.codeOf(inbox, "email:victim@example.com")
	guess(wrongFor(second)).Expect(t, http.StatusUnauthorized) // the 4th wrong guess: budget used up
	locked := guess(second).Expect(t, http.StatusTooManyRequests)
	if s, err := strconv.Atoi(locked.Header.Get("Retry-After")); err != nil || time.Duration(s)*time.Second < 23*time.Hour {
		t.Fatalf("Retry-After %q, want about a day", locked.Header.Get("Retry-After"))
	}

	if err := rdb.Del(context.Background(), app.Cfg.Redis.Prefix+"logincode:{email:victim@example.com}").Err(); err != nil {
		t.Fatal(err)
	}
	app.Do("POST", "/api/users/login/code/send", "", target).Expect(t, http.StatusAccepted)
	strong := app.codeOf(inbox, "email:victim@example.com")
	if !accountCodePattern.MatchString(strong) {
		t.Fatalf("the code sent to a locked target is %q, want a strong XXXXX-XXXXX code", strong)
	}
	for range 5 { // wrong guesses do not burn a strong code
		guess("ZZZZZ-ZZZZZ").Expect(t, http.StatusUnauthorized)
		guess(wrongFor(second)).Expect(t, http.StatusUnauthorized)
	}
	guess(strings.ToLower(strong)).Expect(t, http.StatusOK)
}

// TestPhoneLoginCannotBeBlocked: the .invalid domain cannot be registered, and a phone's first
// code login succeeds even when its placeholder email is taken by an older account.
func TestPhoneLoginCannotBeBlocked(t *testing.T) {
	parallel(t)
	app, inbox := startCodeApp(t)
	reg := app.Do("POST", "/api/users", "", map[string]any{"user": map[string]any{
		"email": "4915111122233@phone.invalid", "username": "squatter", "password": "password123"}}).Expect(t, http.StatusUnprocessableEntity)
	if _, ok := errorsOf(t, reg)["email"]; !ok {
		t.Fatalf("registration error %s", reg.Body)
	}
	// An account made before the domain was refused holds the placeholder of another number.
	if _, err := app.DB.Pool.Exec(context.Background(),
		`INSERT INTO users (email, username, password_hash) VALUES ('4915144455566@phone.invalid', 'oldsquatter', 'x')`); err != nil {
		t.Fatal(err)
	}
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"phone": "+4915144455566"}).Expect(t, http.StatusAccepted)
	code := app.codeOf(inbox, "phone:+4915144455566")
	u := app.Do("POST", "/api/users/login/code", "", map[string]any{"phone": "+4915144455566", "code": code}).Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	if u["username"] == "oldsquatter" || u["token"] == "" {
		t.Fatalf("phone login landed in %v", u)
	}
	// A settings form sends every field back: the placeholder may stay, but nobody moves to one.
	token := u["token"].(string)
	app.Do("PUT", "/api/user", token, map[string]any{"user": map[string]any{"email": u["email"], "username": u["username"], "bio": "hi"}}).Expect(t, http.StatusOK)
	for field, value := range map[string]string{"email": "4915100000000@phone.invalid", "username": "admin"} {
		res := app.Do("PUT", "/api/user", token, map[string]any{"user": map[string]any{field: value}}).Expect(t, http.StatusUnprocessableEntity)
		if _, ok := errorsOf(t, res)[field]; !ok {
			t.Fatalf("changing %s to %q: %s", field, value, res.Body)
		}
	}
}

// TestCanonicalIdentities: spellings of one mailbox (ASCII case, a fullwidth domain, which IDNA
// maps to ASCII) are one account; a fullwidth local part is refused as a look-alike; reserved and
// dot-only usernames are refused.
func TestCanonicalIdentities(t *testing.T) {
	parallel(t)
	app := startApp(t)
	register := func(email, username string) response {
		return app.Do("POST", "/api/users", "", map[string]any{"user": map[string]any{"email": email, "username": username, "password": "password123"}})
	}
	u := register("Jane.Doe@Ｅxample.com", "janedoe").Expect(t, http.StatusCreated).JSON(t)["user"].(map[string]any)
	if u["email"] != "Jane.Doe@Ｅxample.com" {
		t.Fatalf("email stored as %v, want as typed", u["email"])
	}
	for _, lookalike := range []string{"jane.doe@example.com", "JANE.DOE@EXAMPLE.COM", "jane.doe@ｅｘａｍｐｌｅ.ｃｏｍ"} {
		if msg := errorsOf(t, register(lookalike, "jane"+strconv.Itoa(len(lookalike))).Expect(t, http.StatusUnprocessableEntity))["email"]; msg == nil || msg.([]any)[0] != "has already been taken" {
			t.Fatalf("look-alike %q was not refused as a taken email: %v", lookalike, msg)
		}
	}
	if msg := errorsOf(t, register("ｊane.doe@example.com", "janewide").Expect(t, http.StatusUnprocessableEntity))["email"]; msg == nil ||
		!strings.Contains(msg.([]any)[0].(string), "compatibility characters") {
		t.Fatalf("a fullwidth local part: %v", msg)
	}
	app.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{"email": "jane.doe@EXAMPLE.com", "password": "password123"}}).Expect(t, http.StatusOK)
	for i, name := range []string{".", "..", "...", "api", "Admin", "users", "profiles", "articles"} {
		res := register("user"+strconv.Itoa(i)+"@example.com", name).Expect(t, http.StatusUnprocessableEntity)
		if _, ok := errorsOf(t, res)["username"]; !ok {
			t.Fatalf("username %q: %s", name, res.Body)
		}
	}
	register("dots@example.com", "j.doe-2_x").Expect(t, http.StatusCreated)
}

// TestCodeLoginWithRedisDown: with Redis stopped, PostgreSQL meters and checks codes (by hash),
// with the same resend interval and failure budget.
func TestCodeLoginWithRedisDown(t *testing.T) {
	parallel(t)
	inProcess(t, "sets tuning constants through ioc.Config.Tune, which no setting carries to a process")
	redisSrv := testenv.StartRedisServer(t)
	app, inbox := startCodeApp(t, func(c *ioc.Config) {
		c.Redis.URL = redisSrv.URL()
		c.Tune.CodeFailureBudget = new(2)
	})
	redisSrv.Stop()
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "offline@example.com"}).Expect(t, http.StatusAccepted)
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "offline@example.com"}).Expect(t, http.StatusTooManyRequests)
	code := inbox.next(t, "offline@example.com")
	var stored string
	if err := app.DB.Pool.QueryRow(context.Background(), `SELECT code_hash FROM login_codes WHERE target = 'email:offline@example.com'`).Scan(&stored); err != nil || len(stored) != 64 || stored == code {
		t.Fatalf("fallback stored %q (%v), want an HMAC", stored, err)
	}
	app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "offline@example.com", "code": code}).Expect(t, http.StatusOK)

	// The failure budget holds in the fallback too.
	if _, err := app.DB.Pool.Exec(context.Background(), `UPDATE login_codes SET sent_at = sent_at - interval '2 minutes'`); err != nil {
		t.Fatal(err)
	}
	app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "offline@example.com"}).Expect(t, http.StatusAccepted)
	second := inbox.next(t, "offline@example.com")
	wrong := "000000"
	if second == wrong {
		wrong = "000001"
	}
	for range 2 {
		app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "offline@example.com", "code": wrong}).Expect(t, http.StatusUnauthorized)
	}
	app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "offline@example.com", "code": second}).Expect(t, http.StatusTooManyRequests)
}

// TestCodeLoginFailsClosedWhenNeitherStoreAnswers: with Redis stopped and the PostgreSQL fallback
// failing too (its tables renamed away), code send and code login are 503 in the RealWorld error
// shape, never a 500. (That no code goes out unmetered: service/codefallback_test.go.)
func TestCodeLoginFailsClosedWhenNeitherStoreAnswers(t *testing.T) {
	parallel(t)
	redisSrv := testenv.StartRedisServer(t)
	app, _ := startCodeApp(t, func(c *ioc.Config) { c.Redis.URL = redisSrv.URL() })
	redisSrv.Stop()
	for _, table := range []string{"login_codes", "login_code_meters"} {
		if _, err := app.DB.Pool.Exec(context.Background(), "ALTER TABLE "+table+" RENAME TO "+table+"_gone"); err != nil {
			t.Fatal(err)
		}
	}
	res := app.Do("POST", "/api/users/login/code/send", "", map[string]any{"email": "closed@example.com"}).Expect(t, http.StatusServiceUnavailable)
	if _, ok := errorsOf(t, res)["body"]; !ok {
		t.Errorf("503 body %s, want the RealWorld error shape", res.Body)
	}
	app.Do("POST", "/api/users/login/code", "", map[string]any{"email": "closed@example.com", "code": "123456"}).Expect(t, http.StatusServiceUnavailable)
}
