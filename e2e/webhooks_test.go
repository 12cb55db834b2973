package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/ioc"
)

func init() {
	newSinceThePreviousRelease["TestWebhooks_EveryRule"] = "webhooks (#33): /api/user/webhooks, /api/admin/webhooks, signed deliveries"
	newSinceThePreviousRelease["TestWebhooks_RefusedEndpoints"] = "webhooks (#33): the SSRF refusals at creation"
}

// hookCall is one request the receiver got, with its verification.
type hookCall struct {
	ID, Type string
	Body     map[string]any
	Verified error
	Status   int // what the receiver answered
}

// hookReceiver is a real HTTP endpoint that verifies each delivery as the Standard Webhooks
// reference libraries do: the secret is the base64 after "whsec_"; the signature is recomputed
// over "id.timestamp.body" with HMAC-SHA256 and compared in constant time with each "v1,"
// signature of the header; the timestamp must be within 5 minutes of now.
type hookReceiver struct {
	*httptest.Server
	secret atomic.Value // string
	fail   atomic.Int64 // answer 500 to this many more requests
	calls  chan hookCall
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{calls: make(chan hookCall, 100)}
	r.secret.Store("")
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		c := hookCall{ID: req.Header.Get("webhook-id"), Verified: verifyStandardWebhook(r.secret.Load().(string), req.Header, body, time.Now())}
		_ = json.Unmarshal(body, &c.Body)
		c.Type, _ = c.Body["type"].(string)
		c.Status = http.StatusOK
		if r.fail.Add(-1) >= 0 {
			c.Status = http.StatusInternalServerError
		}
		w.WriteHeader(c.Status)
		_, _ = io.WriteString(w, "got "+c.ID)
		r.calls <- c
	}))
	t.Cleanup(r.Close)
	return r
}

func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return fmt.Errorf("secret %q", secret)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || id == "" {
		return fmt.Errorf("headers id %q timestamp %q", id, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s too far from now", ts)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, raw, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(raw)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no matching signature in %q", h.Get("webhook-signature"))
}

// next waits for the receiver's next call (a channel receive; the bound only ends a broken run).
func (r *hookReceiver) next(t *testing.T) hookCall {
	t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery within 30s")
		return hookCall{}
	}
}

func webhookBody(url string, events ...string) map[string]any {
	return map[string]any{"webhook": map[string]any{"url": url, "events": events}}
}

func TestWebhooks_EveryRule(t *testing.T) {
	parallel(t)
	app := startApp(t, func(c *ioc.Config) {
		c.Webhooks.AllowPrivate = true
		c.Tune.WebhookRetryBase, c.Tune.QueuePoll = new(20*time.Millisecond), new(50*time.Millisecond)
	})
	admin, _ := app.staff(t, "wh")
	author, other := app.Register("whauthor"), app.Register("whother")
	recv := newHookReceiver(t)

	created := app.Do("POST", "/api/user/webhooks", author, webhookBody(recv.URL+"/in", "article.published")).
		Expect(t, http.StatusCreated).JSON(t)["webhook"].(map[string]any)
	secret, _ := created["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || created["active"] != true {
		t.Fatalf("created %v", created)
	}
	recv.secret.Store(secret)
	base := "/api/user/webhooks/" + strconv.Itoa(int(created["id"].(float64)))

	t.Run("the secret is shown once and stored encrypted", func(t *testing.T) {
		got := app.Do("GET", base, author, nil).Expect(t, http.StatusOK).JSON(t)["webhook"].(map[string]any)
		if _, ok := got["secret"]; ok || got["url"] != recv.URL+"/in" {
			t.Fatalf("GET %v", got)
		}
		if n := app.pgCount(t, `SELECT count(*) FROM webhooks WHERE position($1::bytea IN secret_enc) > 0`, []byte(secret[6:])); n != 0 {
			t.Fatal("the secret is stored in plain text")
		}
		list := app.Do("GET", "/api/user/webhooks", author, nil).Expect(t, http.StatusOK).JSON(t)["webhooks"].([]any)
		if len(list) != 1 {
			t.Fatalf("list %v", list)
		}
	})

	t.Run("bad input is 422, another user's endpoint is not found", func(t *testing.T) {
		app.Do("POST", "/api/user/webhooks", author, webhookBody(recv.URL)).Expect(t, http.StatusUnprocessableEntity)
		app.Do("POST", "/api/user/webhooks", author, webhookBody(recv.URL, "article.nope")).Expect(t, http.StatusUnprocessableEntity)
		app.Do("POST", "/api/user/webhooks", author, webhookBody("ftp://example.com/", "article.published")).Expect(t, http.StatusUnprocessableEntity)
		app.Do("POST", "/api/user/webhooks", author, webhookBody("https://exa\u0000mple.com/", "article.published")).Expect(t, http.StatusUnprocessableEntity)
		app.Do("PATCH", base, author, map[string]any{"webhook": map[string]any{"events": []string{}}}).Expect(t, http.StatusUnprocessableEntity)
		app.Do("GET", base, other, nil).Expect(t, http.StatusNotFound)
		app.Do("DELETE", base, other, nil).Expect(t, http.StatusNotFound)
		app.Do("GET", "/api/user/webhooks", "", nil).Expect(t, http.StatusUnauthorized)
		app.Do("POST", "/api/admin/webhooks", author, webhookBody(recv.URL, "article.published")).Expect(t, http.StatusForbidden)
	})

	t.Run("at most 10 endpoints per user", func(t *testing.T) {
		for i := range 10 {
			app.Do("POST", "/api/user/webhooks", other, webhookBody(fmt.Sprintf("https://h%d.example.com/", i), "follower.added")).Expect(t, http.StatusCreated)
		}
		app.Do("POST", "/api/user/webhooks", other, webhookBody("https://h10.example.com/", "follower.added")).Expect(t, http.StatusUnprocessableEntity)
	})

	t.Run("signed deliveries, retried, in order", func(t *testing.T) {
		recv.fail.Store(2) // the first delivery fails twice, the others wait for it
		var slugs []string
		for i := range 3 {
			a := articleOf(t, app.Do("POST", "/api/articles", author, newArticle(fmt.Sprintf("Hooked %d", i))).Expect(t, http.StatusCreated))
			slugs = append(slugs, a["slug"].(string))
		}
		var delivered []string
		for len(delivered) < 3 {
			c := recv.next(t)
			if c.Verified != nil {
				t.Fatalf("delivery %s does not verify: %v", c.ID, c.Verified)
			}
			if c.Type != "article.published" {
				t.Fatalf("event %q", c.Type)
			}
			slug := c.Body["data"].(map[string]any)["article"].(map[string]any)["slug"].(string)
			if c.Status == http.StatusOK {
				delivered = append(delivered, slug)
			} else if slug != slugs[0] {
				t.Fatalf("a failure of %s, want only the first's", slug)
			}
		}
		// Strict on any number of instances: the events are numbered in the writes' own
		// transactions, in commit order (migration 00038).
		if strings.Join(delivered, ",") != strings.Join(slugs, ",") {
			t.Fatalf("delivered %v, want in order %v", delivered, slugs)
		}
	})

	t.Run("the deliveries page, redeliver and ping", func(t *testing.T) {
		m := app.Do("GET", base+"/deliveries?limit=2", author, nil).Expect(t, http.StatusOK).JSON(t)
		page := m["deliveries"].([]any)
		next, _ := m["nextCursor"].(string)
		if len(page) != 2 || next == "" {
			t.Fatalf("first page %v next %q", page, next)
		}
		rest := app.Do("GET", base+"/deliveries?cursor="+next, author, nil).Expect(t, http.StatusOK).JSON(t)["deliveries"].([]any)
		if len(rest) != 1 {
			t.Fatalf("second page %v", rest)
		}
		first := rest[0].(map[string]any)
		if first["status"] != "delivered" || first["attempts"] != 3.0 || first["statusCode"] != 200.0 || first["event"] != "article.published" ||
			!strings.HasPrefix(first["response"].(string), "got msg_") {
			t.Fatalf("the first delivery %v", first)
		}
		app.Do("GET", base+"/deliveries?cursor=nope", author, nil).Expect(t, http.StatusUnprocessableEntity)

		id := strconv.Itoa(int(first["id"].(float64)))
		app.Do("POST", base+"/deliveries/"+id+"/redeliver", author, nil).Expect(t, http.StatusAccepted)
		c := recv.next(t)
		if c.Verified != nil || c.Type != "article.published" || c.ID == "msg_"+id {
			t.Fatalf("redelivery %+v", c)
		}
		app.Do("POST", base+"/deliveries/"+id+"/redeliver", other, nil).Expect(t, http.StatusNotFound)

		app.Do("POST", base+"/test", author, nil).Expect(t, http.StatusAccepted)
		if c := recv.next(t); c.Verified != nil || c.Type != "webhook.ping" {
			t.Fatalf("ping %+v", c)
		}
	})

	t.Run("edits of published articles are article.updated", func(t *testing.T) {
		app.Do("PATCH", base, author, map[string]any{"webhook": map[string]any{"events": []string{"article.published", "article.updated"}}}).Expect(t, http.StatusOK)
		a := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Edited later")).Expect(t, http.StatusCreated))
		if c := recv.next(t); c.Type != "article.published" {
			t.Fatalf("got %+v", c)
		}
		app.Do("PUT", "/api/articles/"+a["slug"].(string), author, map[string]any{"article": map[string]any{"body": "Edited."}}).Expect(t, http.StatusOK)
		c := recv.next(t)
		if c.Verified != nil || c.Type != "article.updated" || c.Body["data"].(map[string]any)["article"].(map[string]any)["slug"] != a["slug"] {
			t.Fatalf("edit delivery %+v", c)
		}
	})

	t.Run("comments and follows; the body is the resource as the API renders it", func(t *testing.T) {
		app.Do("PATCH", base, author, map[string]any{"webhook": map[string]any{"events": []string{"article.published", "comment.created", "follower.added"}}}).
			Expect(t, http.StatusOK)
		a := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Rendered")).Expect(t, http.StatusCreated))
		slug := a["slug"].(string)
		c := recv.next(t)
		if c.Verified != nil || c.Type != "article.published" {
			t.Fatalf("got %+v", c)
		}
		hooked := c.Body["data"].(map[string]any)["article"].(map[string]any)
		public := app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK).JSON(t)["article"].(map[string]any)
		delete(public, "bodyHtml") // rendered by the API; the delivery carries the Markdown body
		for _, counter := range []string{"readsCount"} {
			delete(public, counter) // the GET itself may have been counted
			delete(hooked, counter)
		}
		got, _ := json.Marshal(hooked) // maps marshal with sorted keys: equal documents, equal bytes
		if want, _ := json.Marshal(public); !bytes.Equal(got, want) {
			t.Fatalf("delivered article\n%s\nthe API's\n%s", got, want)
		}

		app.Do("POST", "/api/profiles/whauthor/follow", other, nil).Expect(t, http.StatusOK)
		app.Do("POST", "/api/articles/"+slug+"/comments", other, map[string]any{"comment": map[string]any{"body": "Nice one"}}).Expect(t, http.StatusOK)
		if c := recv.next(t); c.Verified != nil || c.Type != "follower.added" ||
			c.Body["data"].(map[string]any)["follower"].(map[string]any)["username"] != "whother" {
			t.Fatalf("follow delivery %+v", c)
		}
		c = recv.next(t)
		data, _ := c.Body["data"].(map[string]any)
		if c.Verified != nil || c.Type != "comment.created" || data["comment"].(map[string]any)["body"] != "Nice one" ||
			data["article"].(map[string]any)["slug"] != slug {
			t.Fatalf("comment delivery %+v", c)
		}
	})

	t.Run("the site's endpoint hears every author", func(t *testing.T) {
		site := newHookReceiver(t)
		sw := app.Do("POST", "/api/admin/webhooks", admin, webhookBody(site.URL, "article.published")).Expect(t, http.StatusCreated).JSON(t)["webhook"].(map[string]any)
		site.secret.Store(sw["secret"].(string))
		app.Do("PATCH", base, author, map[string]any{"webhook": map[string]any{"active": false}}).Expect(t, http.StatusOK)
		a := articleOf(t, app.Do("POST", "/api/articles", other, newArticle("Site wide")).Expect(t, http.StatusCreated))
		c := site.next(t)
		if c.Verified != nil || c.Body["data"].(map[string]any)["article"].(map[string]any)["slug"] != a["slug"] {
			t.Fatalf("site delivery %+v", c)
		}
		if list := app.Do("GET", "/api/admin/webhooks", admin, nil).Expect(t, http.StatusOK).JSON(t)["webhooks"].([]any); len(list) != 1 {
			t.Fatalf("site list %v", list)
		}
		app.Do("GET", "/api/admin/webhooks", author, nil).Expect(t, http.StatusForbidden)
		got := app.Do("GET", base, author, nil).Expect(t, http.StatusOK).JSON(t)["webhook"].(map[string]any)
		if got["active"] != false {
			t.Fatalf("after PATCH active=false: %v", got)
		}
	})

	t.Run("delete", func(t *testing.T) {
		app.Do("DELETE", base, author, nil).Expect(t, http.StatusNoContent)
		app.Do("GET", base, author, nil).Expect(t, http.StatusNotFound)
	})
}

// Without INKWELL_WEBHOOK_ALLOW_PRIVATE, literal private, loopback and link-local addresses and
// plain http are refused at creation (a host name is refused by the dialer on the connected
// address: webhookdial's tests, with a name that resolves to 127.0.0.1).
func TestWebhooks_RefusedEndpoints(t *testing.T) {
	parallel(t)
	app := startApp(t)
	user := app.Register("whstrict")
	for _, url := range []string{"http://hooks.example.com/", "https://127.0.0.1/", "https://[::1]:8443/", "https://169.254.169.254/latest/meta-data",
		"https://10.0.0.8/", "https://192.168.1.1/", "https://[fd00::1]/", "https://localhost/", "https://100.64.0.1/"} {
		r := app.Do("POST", "/api/user/webhooks", user, webhookBody(url, "article.published")).Expect(t, http.StatusUnprocessableEntity)
		if _, ok := r.JSON(t)["errors"].(map[string]any)["url"]; !ok {
			t.Errorf("%s: %s", url, r.Body)
		}
	}
	app.Do("POST", "/api/user/webhooks", user, webhookBody("https://hooks.example.com/in", "article.published")).Expect(t, http.StatusCreated)
}
