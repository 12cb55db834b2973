package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// noAuthLimit keeps the per-IP login budget out of tests that log in and refresh many times.
func noAuthLimit(c *ioc.Config) { c.Server.RateAuth = "0" }

// session is one login: its access and refresh token.
type session struct{ Access, Refresh string }

func (a account) session() session { return session{a.Token, a.Refresh} }

func logIn(t *testing.T, app *testApp, acc account) session {
	t.Helper()
	res := app.call(t, "POST", "/api/users/login", "", map[string]any{"user": map[string]any{
		"email": acc.Email, "password": acc.Password,
	}}).Expect(t, http.StatusOK)
	u := userOf(t, res)
	s := session{Access: u["token"].(string)}
	s.Refresh, _ = u["refreshToken"].(string)
	if s.Refresh == "" {
		t.Fatalf("login answered without refreshToken: %s", res.Body)
	}
	return s
}

// refreshOf parses a successful refresh answer.
func refreshOf(t *testing.T, r response) session {
	t.Helper()
	r.Expect(t, http.StatusOK)
	u := userOf(t, r)
	s := session{Access: u["token"].(string), Refresh: u["refreshToken"].(string)}
	if s.Access == "" || s.Refresh == "" {
		t.Fatalf("refresh answered %s", r.Body)
	}
	return s
}

func (a *testApp) refresh(t *testing.T, token string) response {
	t.Helper()
	return a.call(t, "POST", "/api/users/refresh", "", map[string]any{"refreshToken": token})
}

func requireRefreshRefused(t *testing.T, r response) {
	t.Helper()
	requireErrorField(t, r, http.StatusUnauthorized, "refreshToken")
}

// claimsOf reads an access token's claims without verifying it (the test made or got it).
func claimsOf(t *testing.T, token string) jwt.MapClaims {
	t.Helper()
	c := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, c); err != nil {
		t.Fatalf("parse %q: %v", token, err)
	}
	return c
}

// untilUnauthorized polls GET /api/user with token until it is refused, for at most a second:
// the contract is that a revoked session's access tokens stop working within one.
func untilUnauthorized(t *testing.T, app *testApp, token string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		res := app.call(t, "GET", "/api/user", token, nil)
		if res.Status == http.StatusUnauthorized {
			return
		}
		if res.Status != http.StatusOK {
			t.Fatalf("GET /api/user: %d %s", res.Status, res.Body)
		}
		if time.Now().After(deadline) {
			t.Fatal("access token of a revoked session still works after a second")
		}
		time.Sleep(10 * time.Millisecond) // polling a deadline-bound contract, not synchronizing
	}
}

func TestSessions(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit)

	t.Run("login and registration hand out a refresh token and start distinct sessions", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		s := logIn(t, app, acc)
		if s.Refresh == acc.Refresh {
			t.Fatal("login handed out the registration's refresh token")
		}
		regSID, loginSID := claimsOf(t, acc.Token)["sid"], claimsOf(t, s.Access)["sid"]
		if regSID == "" || regSID == nil || regSID == loginSID {
			t.Fatalf("sessions %v and %v: want two distinct session ids", regSID, loginSID)
		}
		app.call(t, "GET", "/api/user", acc.Token, nil).Expect(t, http.StatusOK)
		app.call(t, "GET", "/api/user", s.Access, nil).Expect(t, http.StatusOK)
	})

	t.Run("refresh rotates; replaying a spent refresh token revokes the whole family", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		other := logIn(t, app, acc) // another session of the same user
		s0 := acc.session()

		s1 := refreshOf(t, app.refresh(t, s0.Refresh))
		if s1.Refresh == s0.Refresh {
			t.Fatal("refresh handed back the same refresh token")
		}
		if claimsOf(t, s1.Access)["sid"] != claimsOf(t, s0.Access)["sid"] {
			t.Fatal("the new access token belongs to another session")
		}
		if u := userOf(t, app.call(t, "GET", "/api/user", s1.Access, nil).Expect(t, http.StatusOK)); u["username"] != acc.Username {
			t.Fatalf("new access token is %v", u["username"])
		}
		s2 := refreshOf(t, app.refresh(t, s1.Refresh)) // the chain goes on

		// The spent s0 comes back: theft. Refused, and the family is revoked.
		requireRefreshRefused(t, app.refresh(t, s0.Refresh))
		requireRefreshRefused(t, app.refresh(t, s2.Refresh)) // the newest one dies too
		requireRefreshRefused(t, app.refresh(t, s1.Refresh))
		untilUnauthorized(t, app, s2.Access)
		app.call(t, "GET", "/api/user", s0.Access, nil).Expect(t, http.StatusUnauthorized)

		// The user's other session is untouched.
		app.call(t, "GET", "/api/user", other.Access, nil).Expect(t, http.StatusOK)
		refreshOf(t, app.refresh(t, other.Refresh))
	})

	t.Run("20 concurrent refreshes of one token: exactly one wins", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		const n = 20
		client := burstClient(t)
		results := make([]response, n)
		errs := make([]error, n)
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-gate
				results[i], errs[i] = app.fetch(client, "POST", "/api/users/refresh", "", map[string]any{"refreshToken": acc.Refresh})
			})
		}
		close(gate)
		wg.Wait()
		var winner *session
		for i, r := range results {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			switch r.Status {
			case http.StatusOK:
				if winner != nil {
					t.Fatal("two concurrent refreshes of one token both won")
				}
				s := refreshOf(t, r)
				winner = &s
			case http.StatusUnauthorized:
				requireRefreshRefused(t, r)
			default:
				t.Fatalf("refresh %d: %d %s", i, r.Status, r.Body)
			}
		}
		if winner == nil {
			t.Fatal("no refresh won")
		}
		// By design the losers look like a replay of a spent token, so the family is revoked:
		// even the winner's new tokens stop working (clients must not refresh concurrently).
		requireRefreshRefused(t, app.refresh(t, winner.Refresh))
		untilUnauthorized(t, app, winner.Access)
	})

	t.Run("logout ends that session only", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		mine, other := logIn(t, app, acc), logIn(t, app, acc)

		res := app.call(t, "POST", "/api/users/logout", mine.Access, nil).Expect(t, http.StatusNoContent)
		if len(res.Body) != 0 {
			t.Fatalf("204 with a body: %s", res.Body)
		}
		untilUnauthorized(t, app, mine.Access)
		requireRefreshRefused(t, app.refresh(t, mine.Refresh))
		requireErrorField(t, app.call(t, "POST", "/api/users/logout", mine.Access, nil), http.StatusUnauthorized, "token")

		app.call(t, "GET", "/api/user", other.Access, nil).Expect(t, http.StatusOK)
		app.call(t, "GET", "/api/user", acc.Token, nil).Expect(t, http.StatusOK) // the registration's session
		refreshOf(t, app.refresh(t, other.Refresh))
	})

	t.Run("refresh input errors", func(t *testing.T) {
		parallel(t)
		for _, tc := range []struct {
			name   string
			body   any
			status int
			field  string
		}{
			{"blank", map[string]any{"refreshToken": ""}, http.StatusUnprocessableEntity, "refreshToken"},
			{"unknown", map[string]any{"refreshToken": "never-issued"}, http.StatusUnauthorized, "refreshToken"},
			{"malformed JSON", `{"refreshToken":`, http.StatusUnprocessableEntity, "body"},
			{"an access token is not a refresh token", nil, http.StatusUnauthorized, "refreshToken"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				parallel(t)
				body := tc.body
				if body == nil {
					body = map[string]any{"refreshToken": signUp(t, app, accountOpts{}).Token}
				}
				requireErrorField(t, app.call(t, "POST", "/api/users/refresh", "", body), tc.status, tc.field)
			})
		}
	})

	t.Run("access tokens the server must refuse", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		live := claimsOf(t, acc.Token)
		gone := signUp(t, app, accountOpts{})
		app.call(t, "POST", "/api/users/logout", gone.Token, nil).Expect(t, http.StatusNoContent)

		now := time.Now()
		secret := []byte(testJWTSecret)
		sign := func(method jwt.SigningMethod, key any, change func(jwt.MapClaims)) string {
			c := jwt.MapClaims{"iss": "inkwell", "sub": live["sub"], "sid": live["sid"], "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
			if change != nil {
				change(c)
			}
			s, err := jwt.NewWithClaims(method, c).SignedString(key)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		// Another user's id in the payload, the original signature kept.
		parts := strings.Split(acc.Token, ".")
		payload := map[string]any{}
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		if err := json.Unmarshal(raw, &payload); err != nil {
			t.Fatal(err)
		}
		sub, _ := strconv.ParseInt(payload["sub"].(string), 10, 64)
		payload["sub"] = strconv.FormatInt(sub+1, 10)
		forged, _ := json.Marshal(payload)
		tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2]

		tests := []struct {
			name  string
			token string
			want  int
		}{
			{"control: a well-formed token of a live session", sign(jwt.SigningMethodHS256, secret, nil), http.StatusOK},
			{"wrong key", sign(jwt.SigningMethodHS256, []byte("another-secret-another-secret-0123456789"), nil), http.StatusUnauthorized},
			{"alg none", sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil), http.StatusUnauthorized},
			{"HS512 with the right key (algorithm pinned)", sign(jwt.SigningMethodHS512, secret, nil), http.StatusUnauthorized},
			{"expired", sign(jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) {
				c["iat"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Minute).Unix()
			}), http.StatusUnauthorized},
			{"not valid yet (nbf in the future)", sign(jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) {
				c["nbf"] = now.Add(10 * time.Minute).Unix()
			}), http.StatusUnauthorized},
			{"issued in the future (iat)", sign(jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) {
				c["iat"] = now.Add(10 * time.Minute).Unix()
			}), http.StatusUnauthorized},
			{"no expiry", sign(jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { delete(c, "exp") }), http.StatusUnauthorized},
			{"wrong issuer", sign(jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["iss"] = "someone-else" }), http.StatusUnauthorized},
			{"tampered payload", tampered, http.StatusUnauthorized},
			{"a logged-out session's token, freshly signed", sign(jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) {
				gc := claimsOf(t, gone.Token)
				c["sub"], c["sid"] = gc["sub"], gc["sid"]
			}), http.StatusUnauthorized},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				parallel(t)
				res := app.call(t, "GET", "/api/user", tc.token, nil)
				if res.Status != tc.want {
					t.Fatalf("GET /api/user: %d %s, want %d", res.Status, res.Body, tc.want)
				}
				if tc.want == http.StatusUnauthorized {
					requireErrorField(t, res, http.StatusUnauthorized, "token")
					// Writes refuse it the same way, and nothing is written.
					title := "Refused " + testenv.RandomID(4)
					requireErrorField(t, app.call(t, "POST", "/api/articles", tc.token, newArticle(title)), http.StatusUnauthorized, "token")
					if n := app.pgCount(t, `SELECT count(*) FROM articles WHERE title = $1`, title); n != 0 {
						t.Fatal("a refused token wrote an article")
					}
				}
			})
		}
	})
}

func TestSessionRevocationWithRedisDown(t *testing.T) {
	parallel(t)
	redisSrv := testenv.StartRedisServer(t)
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.Redis.URL = redisSrv.URL() })
	acc := signUp(t, app, accountOpts{})
	before, during, alive := logIn(t, app, acc), logIn(t, app, acc), logIn(t, app, acc)
	app.call(t, "POST", "/api/users/logout", before.Access, nil).Expect(t, http.StatusNoContent) // Redis has it

	redisSrv.Stop()
	// Revoked while Redis was up: Redis cannot say now, PostgreSQL can.
	app.call(t, "GET", "/api/user", before.Access, nil).Expect(t, http.StatusUnauthorized)
	// Revoked while Redis is down: only PostgreSQL has it.
	app.call(t, "POST", "/api/users/logout", during.Access, nil).Expect(t, http.StatusNoContent)
	app.call(t, "GET", "/api/user", during.Access, nil).Expect(t, http.StatusUnauthorized)
	requireRefreshRefused(t, app.refresh(t, during.Refresh))
	// Live sessions keep working.
	app.call(t, "GET", "/api/user", alive.Access, nil).Expect(t, http.StatusOK)
	refreshOf(t, app.refresh(t, alive.Refresh))

	// Redis comes back empty (it keeps nothing on disk): it lost before's revocation and never got
	// during's. Once it answers again it must not be taken at its word ("not revoked").
	redisSrv.Start()
	app.waitFor("Redis answers the service again", func() bool {
		return app.ready(t)
	})
	app.call(t, "GET", "/api/user", before.Access, nil).Expect(t, http.StatusUnauthorized)
	app.call(t, "GET", "/api/user", during.Access, nil).Expect(t, http.StatusUnauthorized)
	app.call(t, "GET", "/api/user", alive.Access, nil).Expect(t, http.StatusOK)
	// The renewer refilled Redis from PostgreSQL before starting the lease again: once the lease
	// is back, Redis has both revocations again.
	rdb := redis.NewClient(&redis.Options{Addr: redisSrv.Addr})
	defer rdb.Close()
	app.waitFor("the revocation lease is renewed", func() bool {
		return rdb.Exists(t.Context(), revocationLeaseKey(app.Cfg.Redis.Prefix)).Val() == 1
	})
	for _, access := range []string{before.Access, during.Access} {
		if n, err := rdb.Exists(t.Context(), revocationMarkKey(t, app.Cfg.Redis.Prefix, access)).Result(); err != nil || n != 1 {
			t.Fatalf("revocation of session %v in Redis after the refill: %d, %v", claimsOf(t, access)["sid"], n, err)
		}
	}
	app.call(t, "GET", "/api/user", during.Access, nil).Expect(t, http.StatusUnauthorized)
}

// revocationLeaseKey is the Redis key whose existence vouches that the revocation marks under
// prefix are complete (cache.Revocations).
func revocationLeaseKey(prefix string) string { return prefix + "{revocations}:complete" }

// revocationMarkKey is the Redis key that marks the session of access revoked.
func revocationMarkKey(t *testing.T, prefix, access string) string {
	t.Helper()
	sid, _ := claimsOf(t, access)["sid"].(string)
	return prefix + "{revocations}:revoked:" + sid
}

func TestAPIKeys(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit)
	owner, stranger := signUp(t, app, accountOpts{}), signUp(t, app, accountOpts{})

	created := app.call(t, "POST", "/api/user/api-keys", owner.Token, map[string]any{"apiKey": map[string]any{"name": "ci"}}).
		Expect(t, http.StatusCreated)
	k := created.JSON(t)["apiKey"].(map[string]any)
	key, _ := k["key"].(string)
	id := int64(k["id"].(float64))
	if !strings.HasPrefix(key, "iw_") || len(key) < 40 || k["name"] != "ci" || k["prefix"] != key[:9] || k["lastUsedAt"] != nil ||
		!isoMillis.MatchString(k["createdAt"].(string)) {
		t.Fatalf("created %s", created.Body)
	}
	path := "/api/user/api-keys/" + strconv.FormatInt(id, 10)

	list := func(t *testing.T) map[string]any {
		t.Helper()
		res := app.call(t, "GET", "/api/user/api-keys", owner.Token, nil).Expect(t, http.StatusOK)
		if strings.Contains(string(res.Body), key) || strings.Contains(string(res.Body), key[9:]) {
			t.Fatalf("the list shows the key: %s", res.Body)
		}
		keys := res.JSON(t)["apiKeys"].([]any)
		if len(keys) != 1 {
			t.Fatalf("list %s, want the one key", res.Body)
		}
		item := keys[0].(map[string]any)
		if _, has := item["key"]; has || item["prefix"] != key[:9] || item["name"] != "ci" || item["createdAt"] == nil {
			t.Fatalf("list item %v", item)
		}
		return item
	}

	t.Run("listed without the key, never used yet", func(t *testing.T) {
		if item := list(t); item["lastUsedAt"] != nil {
			t.Fatalf("lastUsedAt %v before any use", item["lastUsedAt"])
		}
	})

	t.Run("the database keeps only its SHA-256", func(t *testing.T) {
		sum := sha256.Sum256([]byte(key))
		var stored []byte
		if err := app.DB.Pool.QueryRow(context.Background(), `SELECT key_hash FROM api_keys WHERE id = $1`, id).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if string(stored) != string(sum[:]) {
			t.Fatalf("key_hash = %x, want sha256(key) = %x", stored, sum)
		}
		for _, secret := range []string{key, key[3:], key[9:]} {
			if n := app.pgCount(t, `SELECT count(*) FROM api_keys a WHERE strpos(a::text, $1) > 0`, secret); n != 0 {
				t.Fatal("a column of api_keys holds the key in plaintext")
			}
		}
	})

	t.Run("it authenticates as its owner with Bearer and Token", func(t *testing.T) {
		for _, scheme := range []string{"Bearer", "Token"} {
			res := app.call(t, "GET", "/api/user", "", nil, "Authorization", scheme+" "+key).Expect(t, http.StatusOK)
			if userOf(t, res)["username"] != owner.Username {
				t.Fatalf("%s: answered %s", scheme, res.Body)
			}
		}
		title := "By key " + testenv.RandomID(4)
		a := articleOf(t, app.call(t, "POST", "/api/articles", "", newArticle(title), "Authorization", "Bearer "+key).Expect(t, http.StatusCreated))
		if a["author"].(map[string]any)["username"] != owner.Username {
			t.Fatalf("article by %v", a["author"])
		}
	})

	t.Run("lastUsedAt is set after use", func(t *testing.T) {
		used, _ := list(t)["lastUsedAt"].(string)
		if !isoMillis.MatchString(used) {
			t.Fatalf("lastUsedAt = %q after use", used)
		}
	})

	t.Run("a key cannot log out a session", func(t *testing.T) {
		requireErrorField(t, app.call(t, "POST", "/api/users/logout", "", nil, "Authorization", "Bearer "+key), http.StatusForbidden, "token")
	})

	t.Run("unknown keys and bad names", func(t *testing.T) {
		app.call(t, "GET", "/api/user", "iw_never-issued-never-issued-never-issued", nil).Expect(t, http.StatusUnauthorized)
		requireErrorField(t, app.call(t, "POST", "/api/user/api-keys", owner.Token, map[string]any{"apiKey": map[string]any{"name": ""}}),
			http.StatusUnprocessableEntity, "name")
		app.call(t, "DELETE", path, stranger.Token, nil).Expect(t, http.StatusNotFound) // not theirs
		app.call(t, "GET", "/api/user", key, nil).Expect(t, http.StatusOK)
	})

	t.Run("revoked: the key is refused at once", func(t *testing.T) {
		app.call(t, "DELETE", path, owner.Token, nil).Expect(t, http.StatusNoContent)
		for _, scheme := range []string{"Bearer", "Token"} {
			requireErrorField(t, app.call(t, "GET", "/api/user", "", nil, "Authorization", scheme+" "+key), http.StatusUnauthorized, "token")
		}
		app.call(t, "DELETE", path, owner.Token, nil).Expect(t, http.StatusNotFound)
		if keys := app.call(t, "GET", "/api/user/api-keys", owner.Token, nil).Expect(t, http.StatusOK).JSON(t)["apiKeys"].([]any); len(keys) != 0 {
			t.Fatalf("revoked key still listed: %v", keys)
		}
		// The owner's sessions are not affected.
		app.call(t, "GET", "/api/user", owner.Token, nil).Expect(t, http.StatusOK)
	})
}
